//! `git hpp deliberate record`: seal a finished session and keep it at
//! `refs/hpp/deliberations/<id>`.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::plan::write_file;
use super::session::{DeliberateTallyArgs, inputs};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::sign::Signing;
use hpp_core::deliberation::{self, Record};

/// Seal a finished House Session as an hpp.deliberation/v2 record under refs/hpp/deliberations
///
/// The session's turns are hpp.turn/v1 documents; it must have stopped by rule. Unless it stopped not-judged (then the verdict is
/// blocked and no judge is needed), --judge gives the judge seat's hpp.decision/v1 record: the
/// panel's question and state, method local-model or external-model, the judge seat's provider
/// and pinned model. When the verdict leaves grounded dissent, --rationale gives the judge
/// seat's hpp.rationale/v1: a steelman of each dissenting position and what would change the
/// verdict. Writes the sealed hpp.deliberation/v2 record once, as a commit at
/// refs/hpp/deliberations/<panel id>-<hash> whose tree holds panel.json, turns/<n>.json,
/// judge.json, rationale.json, record.json (and record.sig with signer when signed); --out also
/// writes it as a file. human_decision stays outside the seal. Prints {"status": "recorded",
/// "ref", "record", "record_sha256", "stop", "verdict", "dissent", "decision"}.
///
/// Exit codes: 0 a recommendation or an abstention, 1 a blocked verdict or a judge failure
/// (recorded all the same), 2 refused (nothing written).
#[derive(Debug, clap::Args)]
pub struct DeliberateRecordArgs {
    #[command(flatten)]
    session: DeliberateTallyArgs,
    /// The judge seat's decision (hpp.decision/v1)
    #[arg(long, value_name = "J.json")]
    judge: Option<PathBuf>,
    /// The judge seat's rationale (hpp.rationale/v1)
    #[arg(long, value_name = "R.json")]
    rationale: Option<PathBuf>,
    #[command(flatten)]
    seal: SealArgs,
}

/// `git hpp deliberate record`.
pub fn cmd_deliberate_record(ctx: &Ctx, args: &DeliberateRecordArgs) -> Result<Outcome, CliError> {
    let (panel, turns) = inputs(ctx, &args.session)?;
    let judge = args
        .judge
        .as_ref()
        .map(|p| read_json(ctx, p, JsonRoot::Object))
        .transpose()?;
    let rationale = args
        .rationale
        .as_ref()
        .map(|p| read_json(ctx, p, JsonRoot::Object))
        .transpose()?;
    let record = deliberation::build_record(&panel, &turns, judge.as_ref(), rationale.as_ref())?;
    let signing = args.seal.signing(ctx)?;
    let store = ctx.store()?;
    let stored = crate::deliberation::store_record(store, &record, &[], signing.as_ref())?;
    let (document, exit) = args.seal.recorded(ctx, &record, &stored)?;
    unsigned_said(ctx, signing.as_ref(), Outcome::json(&document, exit))
}

/// Adds to a sealed session's outcome that it is unsigned, and what readers will do with it,
/// when no key signed it.
pub(super) fn unsigned_said(
    ctx: &Ctx,
    signing: Option<&Signing>,
    outcome: Outcome,
) -> Result<Outcome, CliError> {
    Ok(match signing {
        Some(_) => outcome,
        None => outcome.warn(crate::cli::output::unsigned(
            "the sealed session",
            &ctx.trust(None, false, false)?,
        )),
    })
}

/// Where and how a sealed record is kept: `--out`, `--sign-key`, `--signer` (shared by
/// `deliberate record` and `deliberate run`).
#[derive(Debug, clap::Args)]
pub struct SealArgs {
    /// Also write the sealed record to this file (pretty, sorted keys)
    #[arg(long, value_name = "OUT.json")]
    out: Option<PathBuf>,
    /// Key to sign record.json with: an OpenSSH private key (ed25519 or ecdsa), or a public key
    /// whose private half is in ssh-agent [default with --signer: git's user.signingKey when
    /// gpg.format=ssh]
    #[arg(long, value_name = "KEY", requires = "signer")]
    sign_key: Option<PathBuf>,
    /// Principal the allowed-signers file lists for that key: the judge's seat (its declared
    /// principal, else its lane or seat id)
    #[arg(long, value_name = "NAME")]
    signer: Option<String>,
}

impl SealArgs {
    /// Returns the signer named, if any.
    pub(super) fn signer(&self) -> Option<&str> {
        self.signer.as_deref()
    }

    /// Resolves the signing key, refusing a --signer without one.
    pub(super) fn signing(&self, ctx: &Ctx) -> Result<Option<Signing>, CliError> {
        ctx.named_signing(self.sign_key.as_deref(), self.signer.as_deref())
    }

    /// Writes --out and returns what `record` and `run` print once a record is kept at
    /// `stored`, with the exit code its verdict gives: 0 when the panel reached its judge, 1
    /// when it stopped without a usable judgement.
    pub(super) fn recorded(
        &self,
        ctx: &Ctx,
        record: &Record,
        stored: &str,
    ) -> Result<(Value, Exit), CliError> {
        if let Some(out) = &self.out {
            write_file(ctx, out, record)?;
        }
        let exit = if record.verdict.status.reached_judge() {
            Exit::Ok
        } else {
            Exit::Warn
        };
        let document = json!({
            "status": "recorded",
            "ref": stored,
            "record": self.out.as_ref().map(|p| p.display().to_string()),
            "record_sha256": record.record_sha256,
            "stop": record.stop,
            "verdict": record.verdict,
            "dissent": record.dissent,
            "decision": deliberation::as_decision(record),
        });
        Ok((document, exit))
    }
}
