//! Embeds the installable modules (`modules/<id>/...`) in the binary, so `git hpp install` and
//! `git hpp init` work with the built-in manifest wherever the binary is installed.
//!
//! Writes `$OUT_DIR/embedded_modules.rs`: one `EmbeddedFile` per regular file under `modules/`
//! (its `/`-separated path from the crate root, its bytes through `include_bytes!`, and whether
//! it is executable), sorted by path. `include_bytes!` makes cargo rebuild when a listed file
//! changes; `rerun-if-changed=modules` makes it rebuild when a file is added or removed.

use std::path::{Path, PathBuf};

fn main() {
    link_relocations_packed();
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let modules = root.join("modules");
    println!("cargo:rerun-if-changed=modules");
    let mut files = Vec::new();
    if modules.is_dir() {
        walk(&modules, &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// Every file under `modules/`, sorted by path.\npub static FILES: &[EmbeddedFile] = &[\n",
    );
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .expect("a walked path is under the crate root")
            .to_str()
            .expect("module file names are UTF-8")
            .replace('\\', "/");
        let absolute = path.to_str().expect("the crate path is UTF-8");
        out.push_str(&format!(
            "    EmbeddedFile {{ path: {relative:?}, bytes: include_bytes!({absolute:?}), executable: {} }},\n",
            executable(path)
        ));
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"))
        .join("embedded_modules.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).expect("module directories are readable");
    for entry in entries {
        let entry = entry.expect("module directories are readable");
        let kind = entry.file_type().expect("file types are readable");
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, out);
        } else if kind.is_file() {
            out.push(path);
        } else {
            panic!(
                "{}: a module may hold only files and directories",
                path.display()
            );
        }
    }
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sh")
}

/// Links the binaries with their relative relocations packed (`DT_RELR`, glibc 2.36 and GNU ld
/// 2.38 or newer; lld and mold take the same flag) where the target is Linux with glibc: the
/// 38,000 relocations a position-independent `git-hpp` carries were 900 KB the loader read and
/// applied one by one at every start, a sixth of the start-up of a command that runs in a few
/// milliseconds (every hook an agent host runs). Packed, they are a few kilobytes.
fn link_relocations_packed() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
