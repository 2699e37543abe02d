//! `hop`: the Hop agent protocol controller on the git-hpp store.

fn main() -> std::process::ExitCode {
    git_hpp::cli::hop::run(std::env::args_os())
}
