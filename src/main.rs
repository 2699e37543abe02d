//! `git-hpp`: the House Party Protocol harness as a git subcommand (`git hpp ...`).

fn main() -> std::process::ExitCode {
    git_hpp::cli::run(std::env::args_os())
}
