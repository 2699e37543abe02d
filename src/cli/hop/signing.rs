//! `--sign-key` / `--signer` of the hop commands that record evidence (`check`, `land`): the
//! bundles are signed, so a repository that requires signed records accepts them.

use std::path::PathBuf;

use super::HopCtx;
use super::out::{HopError, HopExit};
use crate::sign::{self, Signing};

/// How the evidence bundles a command records are signed.
#[derive(Debug, Clone, clap::Args)]
pub struct SignArgs {
    /// Sign the evidence bundle with this SSH private key (needs --signer)
    #[arg(long, value_name = "KEY", requires = "signer")]
    sign_key: Option<PathBuf>,
    /// The principal the bundle is signed as, as the allowed-signers file names it
    #[arg(long, value_name = "NAME", requires = "sign_key")]
    signer: Option<String>,
}

impl SignArgs {
    /// Loads the key, or `None` when the bundles are not to be signed.
    pub fn signing(&self, ctx: &HopCtx) -> Result<Option<Signing>, HopError> {
        let (Some(key), Some(signer)) = (&self.sign_key, &self.signer) else {
            return Ok(None);
        };
        let usage = |e: sign::Error| HopError::new(HopExit::Usage, e);
        let signer = signer.parse().map_err(usage)?;
        let passphrase = std::env::var(sign::PASSPHRASE_ENV).ok();
        let key = sign::source::load(&ctx.absolute(key), passphrase.as_deref()).map_err(usage)?;
        Ok(Some(Signing { key, signer }))
    }
}
