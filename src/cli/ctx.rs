//! `Ctx`: what every command may need, resolved once: the working directory, the store (opened
//! on first use), the manifest and the default loop.

use std::cell::OnceCell;
use std::io::Read;
use std::path::PathBuf;

use super::exit::CliError;
use crate::sign::Signing;
use crate::sign::{self, AllowedSigners, SignerId};
use hpp_core::manifest::{self, Manifest};
use hpp_store::Store;
use hpp_store::refs::LoopId;

/// The command context.
pub struct Ctx {
    cwd: PathBuf,
    manifest_path: Option<PathBuf>,
    quiet: bool,
    store: OnceCell<Store>,
}

impl Ctx {
    /// Builds a context from the process's working directory and the global `--manifest`.
    pub fn new(manifest_path: Option<PathBuf>, quiet: bool) -> Result<Self, CliError> {
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::refused(format!("cannot read the working directory: {e}")))?;
        Ok(Self {
            cwd,
            manifest_path,
            quiet,
            store: OnceCell::new(),
        })
    }

    /// Whether `-q` was given: no chatter on success (a criterion's output is not streamed).
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Returns the working directory.
    pub fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// The store, when the command opened it.
    pub fn opened(&self) -> Option<&Store> {
        self.store.get()
    }

    /// Returns the repository, opening it on first use (`GIT_DIR` honoured).
    pub fn store(&self) -> Result<&Store, CliError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let store = Store::discover(&self.cwd)?;
        Ok(self.store.get_or_init(|| store))
    }

    /// Opens the repository as a `pre-receive` hook sees it: the push's objects read from git's
    /// quarantine (`GIT_QUARANTINE_PATH`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`) and its ref updates
    /// seen as landed. Every later [`Ctx::store`] is that view. Call it before anything else
    /// opens the store.
    pub fn receive(&self, updates: &[hpp_store::PendingUpdate]) -> Result<&Store, CliError> {
        let quarantine = std::env::var_os("GIT_QUARANTINE_PATH").map(PathBuf::from);
        let alternates: Vec<PathBuf> = std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        let store =
            Store::discover(&self.cwd)?.receiving(quarantine.as_deref(), &alternates, updates)?;
        if self.store.get().is_some() {
            return Err(CliError::internal(
                "opening the repository for a push",
                &std::io::Error::other("the repository was opened before the push was read"),
            ));
        }
        Ok(self.store.get_or_init(|| store))
    }

    /// Returns the file of the manifest in force, or `None` for the built-in one: `--manifest
    /// FILE` (from the working directory), else `hpp.manifest.json` at the root of the
    /// worktree. Outside a repository (and in a bare one) there is no worktree root, so the
    /// built-in manifest is in force: commands that need no repository work anywhere.
    pub fn manifest_file(&self) -> Result<Option<PathBuf>, CliError> {
        if let Some(path) = &self.manifest_path {
            return Ok(Some(path.clone()));
        }
        let store = match self.store.get() {
            Some(store) => store,
            None => match Store::discover(&self.cwd) {
                Ok(store) => self.store.get_or_init(|| store),
                Err(hpp_store::Error::NotARepository { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            },
        };
        Ok(store
            .workdir()
            .map(|root| root.join(manifest::FILE_NAME))
            .filter(|path| path.is_file()))
    }

    /// Returns the manifest in force (see [`Ctx::manifest_file`]), parsed: protocol 2.1 and a
    /// valid loop. The whole protocol is checked by [`manifest::validate`] where it matters
    /// (doctor, install, init), so a half-edited module block does not stop event commands.
    pub fn manifest(&self) -> Result<Manifest, CliError> {
        match self.manifest_file()? {
            None => Ok(Manifest::built_in()),
            Some(path) => {
                let text = super::caps::read_capped(&path, super::caps::JSON_FILE_CAP, "manifest")
                    .and_then(|b| {
                        String::from_utf8(b).map_err(|_| {
                            CliError::refused(format!(
                                "manifest {} is not UTF-8 text",
                                path.display()
                            ))
                        })
                    });
                let text = text?;
                Ok(Manifest::parse(&text, &path.display().to_string())?)
            }
        }
    }

    /// Loads a signing key and pairs it with its principal: a private key file, or a public key
    /// whose private half is in ssh-agent. The passphrase of an encrypted key comes from the
    /// environment variable [`sign::PASSPHRASE_ENV`].
    pub fn signing(&self, key: &std::path::Path, signer: &str) -> Result<Signing, CliError> {
        let signer: SignerId = signer.parse()?;
        let passphrase = std::env::var(sign::PASSPHRASE_ENV).ok();
        let key = sign::source::load(&self.cwd.join(key), passphrase.as_deref())?;
        Ok(Signing { key, signer })
    }

    /// Returns the signing a command's `--sign-key` and `--signer` ask for: that key as that
    /// principal; with `--signer` alone, git's signing key ([`Ctx::git_signing`]), refused when
    /// git has none; nothing when neither is given.
    pub fn named_signing(
        &self,
        key: Option<&std::path::Path>,
        signer: Option<&str>,
    ) -> Result<Option<Signing>, CliError> {
        match (key, signer) {
            (Some(key), Some(signer)) => Ok(Some(self.signing(key, signer)?)),
            (None, Some(signer)) => Ok(Some(self.git_signing(signer)?.ok_or_else(|| {
                CliError::refused(
                    "--signer needs a key: --sign-key KEY, or git's user.signingKey with gpg.format=ssh",
                )
            })?)),
            _ => Ok(None),
        }
    }

    /// Returns the key git signs with, when git is set up to sign with SSH (`gpg.format=ssh`
    /// and `user.signingKey`), paired with `signer`; `None` otherwise. Like `git commit -S`, a
    /// `key::` literal or a public key is used through ssh-agent.
    pub fn git_signing(&self, signer: &str) -> Result<Option<Signing>, CliError> {
        let store = self.store()?;
        if store.config_string("gpg.format").as_deref() != Some("ssh") {
            return Ok(None);
        }
        let Some(value) = store.config_string("user.signingKey") else {
            return Ok(None);
        };
        let signer: SignerId = signer.parse()?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let passphrase = std::env::var(sign::PASSPHRASE_ENV).ok();
        let key = sign::source::from_git_config(
            &value,
            &home,
            store.workdir().unwrap_or(&self.cwd),
            passphrase.as_deref(),
        )?;
        Ok(Some(Signing { key, signer }))
    }

    /// Returns the allowed-signers file in force: `--allowed-signers`, else git config
    /// `hpp.allowedSignersFile`, else `gpg.ssh.allowedSignersFile`; `None` when none is set.
    /// A configured relative path is taken from the worktree root, as git does for this key.
    pub fn allowed_signers(
        &self,
        explicit: Option<&std::path::Path>,
    ) -> Result<Option<AllowedSigners>, CliError> {
        let path = match explicit {
            Some(path) => Some(self.cwd.join(path)),
            None => {
                let store = self.store()?;
                let configured = store
                    .config_string("hpp.allowedSignersFile")
                    .or_else(|| store.config_string("gpg.ssh.allowedSignersFile"));
                configured.map(|text| {
                    let home = std::env::var_os("HOME")
                        .map(PathBuf::from)
                        .unwrap_or_default();
                    match text.strip_prefix("~/") {
                        Some(rest) => home.join(rest),
                        None => store.workdir().unwrap_or(&self.cwd).join(text),
                    }
                })
            }
        };
        path.map(|p| AllowedSigners::load(&p).map_err(CliError::from))
            .transpose()
    }

    /// Returns the allowed signers in force and whether signatures are required.
    ///
    /// Signatures are required when an allowed-signers source is configured (`explicit`, git
    /// config `hpp.allowedSignersFile` or `gpg.ssh.allowedSignersFile`), unless `allow_unsigned`
    /// or `hpp.requireSigned=false` says otherwise; `require` or `hpp.requireSigned=true` require
    /// them even with no source (then nothing verifies).
    pub fn signature_policy(
        &self,
        explicit: Option<&std::path::Path>,
        require: bool,
        allow_unsigned: bool,
    ) -> Result<(Option<AllowedSigners>, bool), CliError> {
        let allowed = self.allowed_signers(explicit)?;
        let configured = self.store()?.config_bool("hpp.requireSigned");
        let required = if require {
            true
        } else if allow_unsigned {
            false
        } else {
            configured.unwrap_or(allowed.is_some())
        };
        Ok((allowed, required))
    }

    /// Returns the signature rule in force ([`crate::trust::decide`]): the repository's trust
    /// policy when it has one (verified from the pinned root; signatures required; roles from
    /// it), else the allowed-signers file and requirement [`Ctx::signature_policy`] decides.
    pub fn trust(
        &self,
        explicit: Option<&std::path::Path>,
        require: bool,
        allow_unsigned: bool,
    ) -> Result<crate::trust::Trust, CliError> {
        let (file, required) = self.signature_policy(explicit, require, allow_unsigned)?;
        Ok(crate::trust::decide(self.store()?, file, required)?)
    }

    /// Returns the directories of `PATH`.
    pub fn path_dirs(&self) -> Vec<PathBuf> {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default()
    }

    /// Reads standard input to its end, as text: the one reader of stdin, for the hooks that
    /// git (pre-push lines) and the agent hosts (one JSON object) feed there. More than `cap`
    /// bytes is refused as soon as the cap is passed, never read whole (`what` names the input).
    pub fn read_stdin(&self, cap: u64, what: &str) -> Result<String, CliError> {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(cap + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::refused(format!("cannot read {what} on stdin: {e}")))?;
        if bytes.len() as u64 > cap {
            return Err(CliError::refused(format!(
                "{what} on stdin is larger than {}, its cap: refused before reading it whole",
                super::caps::size(cap)
            )));
        }
        String::from_utf8(bytes)
            .map_err(|_| CliError::refused(format!("{what} on stdin is not UTF-8 text")))
    }

    /// Returns the loop a reader acts on: as [`Ctx::loop_id`], but a loop named with `--loop`
    /// must exist, or the name is refused naming the loops that do (a typo is not a new loop).
    pub fn existing_loop_id(&self, explicit: Option<&LoopId>) -> Result<LoopId, CliError> {
        let id = self.loop_id(explicit)?;
        if explicit.is_none() {
            return Ok(id);
        }
        let store = self.store()?;
        let name = hpp_store::refs::loop_log(&id);
        if store.tip(&name)?.is_some() {
            return Ok(id);
        }
        let loops: Vec<String> = store
            .list_names(hpp_store::refs::LOOPS_PREFIX)?
            .iter()
            .map(|n| n[hpp_store::refs::LOOPS_PREFIX.len()..].to_owned())
            .collect();
        let known = if loops.is_empty() {
            "there are no loops yet".to_owned()
        } else {
            format!("the loops here: {}", loops.join(", "))
        };
        Err(CliError::refused(format!("no loop named {id}; {known}")).hint(format!(
            "a new loop starts with its first event: git hpp event append --loop {id} --type work_started"
        )))
    }

    /// Returns the loop to act on: `--loop`, else the current branch's name.
    pub fn loop_id(&self, explicit: Option<&LoopId>) -> Result<LoopId, CliError> {
        if let Some(id) = explicit {
            return Ok(id.clone());
        }
        match self.store()?.current_branch()? {
            Some(branch) => branch.parse().map_err(CliError::from),
            None => Err(
                CliError::refused("HEAD is detached, so there is no default loop")
                    .hint("name the loop with --loop NAME"),
            ),
        }
    }
}
