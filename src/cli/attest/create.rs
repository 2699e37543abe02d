//! `git hpp attest create`: record a checker's verdict.

use std::path::PathBuf;

use crate::attest::{self, CreateRequest, Deliberation};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::deliberation::read_sealed;
use hpp_core::attestation::Verdict;
use hpp_core::deliberation::{self, Grounding, SessionType};

/// Record a checker's verdict on the current workspace snapshot
///
/// Binds the verdict to the repository identity (the root commits of HEAD's history, which every
/// clone shares; HEAD needs a commit), HEAD, the spec (path, sha256, blob) and the snapshot tree
/// of tracked plus untracked-not-ignored files, with the evidence bundles named by --evidence
/// and those the loop recorded. The record is signed as the checker (only the checker may sign
/// it) with --sign-key, else with git's user.signingKey when gpg.format=ssh, unless --no-sign.
/// A later revise or blocked by the same checker revokes an earlier approval of the tree. Writes
/// refs/hpp/attestations/<tree>/<id>, and a note in refs/notes/hpp on HEAD and each branch tip
/// whose tree is the snapshot. Maker and checker must differ ignoring case. With --deliberation,
/// a sealed release-gate session (a file, or a ref or id under refs/hpp/deliberations) judged
/// outside --maker-family and grounded on evidence bundles can only make the verdict stricter
/// (approved < revise < blocked; a verdict that is not a recommendation counts as revise); the
/// record names it and its tree keeps it. Exits 0 for a recorded approved,
/// 2 for a recorded revise or blocked, and 2 for refused input (nothing written).
#[derive(Debug, clap::Args)]
pub struct AttestCreateArgs {
    /// The spec the work was checked against (a file inside the repository)
    #[arg(long, value_name = "FILE")]
    spec: PathBuf,
    /// Who made the work
    #[arg(long)]
    maker: String,
    /// Who checked it (must not be the maker)
    #[arg(long)]
    checker: String,
    /// Review session id (1-128 of letters, digits, '.', '_', ':' or '-')
    #[arg(long)]
    session: String,
    /// The checker's verdict: approved, revise or blocked
    #[arg(long)]
    verdict: String,
    /// Evidence bundle the verdict relies on: id, <id>-<stamp> or ref (can be repeated)
    #[arg(long = "evidence", value_name = "BUNDLE")]
    evidence: Vec<String>,
    /// Key to sign the record with: an OpenSSH private key (ed25519 or ecdsa), or a public key
    /// whose private half is in ssh-agent [default: git's user.signingKey when gpg.format=ssh]
    #[arg(long, value_name = "KEY")]
    sign_key: Option<PathBuf>,
    /// Principal the allowed-signers file lists for that key; must be the checker [default: the
    /// checker]
    #[arg(long, value_name = "NAME")]
    signer: Option<String>,
    /// Record it unsigned even where git has a signing key
    #[arg(long, conflicts_with_all = ["sign_key", "signer"])]
    no_sign: bool,
    /// A sealed release-gate session whose verdict can only make this one stricter: a file, a ref or an id
    #[arg(long, value_name = "REF")]
    deliberation: Option<String>,
    /// The maker's model family; a judge of that family is refused
    #[arg(long, value_name = "F")]
    maker_family: Option<String>,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Records the attestation.
pub fn cmd_attest_create(ctx: &Ctx, args: &AttestCreateArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let deliberation = match &args.deliberation {
        Some(name) => {
            let family = args
                .maker_family
                .as_deref()
                .ok_or(deliberation::Error::NeedsMakerFamily)?;
            let sealed = read_sealed(
                ctx.cwd(),
                name,
                |path| read_json(ctx, path, JsonRoot::Object),
                || ctx.store(),
            )?;
            let verdict = deliberation::panel_verdict(
                &sealed.record,
                SessionType::ReleaseGate,
                &hpp_core::attestation::VERDICTS,
                family,
                Grounding::EvidenceRecordsOnly,
            )?;
            Some(Deliberation {
                verdict,
                // A verified record serialises to the bytes it was read from.
                record: serde_json::to_value(&sealed.record)
                    .expect("a sealed record serialises: its keys are strings"),
                record_ref: sealed.reference,
            })
        }
        None => None,
    };
    let manifest = ctx.manifest()?;
    let signer = args.signer.as_deref().unwrap_or(args.checker.trim());
    let signing = match (&args.sign_key, args.no_sign) {
        (Some(key), _) => Some(ctx.signing(key, signer)?),
        (None, false) => ctx.git_signing(signer)?,
        (None, true) => None,
    };
    if args.signer.is_some() && signing.is_none() {
        return Err(CliError::refused(
            "--signer needs a key: --sign-key KEY, or git's user.signingKey with gpg.format=ssh",
        ));
    }
    // The loop's evidence is bound when the loop can be named; a detached HEAD just binds none.
    let loop_id = match &args.target.name {
        Some(id) => Some(id.clone()),
        None => ctx.loop_id(None).ok(),
    };
    let created = attest::create_with(
        store,
        ctx.cwd(),
        CreateRequest {
            spec: &args.spec,
            maker: &args.maker,
            checker: &args.checker,
            session: &args.session,
            verdict: &args.verdict,
            evidence: &args.evidence,
            loop_id: loop_id.map(|id| (manifest.loop_spec(), id)),
            loop_named: args.target.name.is_some(),
            signing,
        },
        deliberation,
    )?;
    let warning = match &record_signer(&created) {
        Some(_) => None,
        None => Some(crate::cli::output::unsigned(
            "the attestation",
            &ctx.trust(None, false, false)?,
        )),
    };
    let record = &created.record;
    let exit = match record.verdict {
        Verdict::Approved => Exit::Ok,
        Verdict::Revise | Verdict::Blocked => Exit::Block,
    };
    let mut human = format!(
        "recorded {} by {} for snapshot {}\n{}",
        record.verdict, record.actors.checker, record.snapshot.tree, created.attestation_ref
    );
    for commit in &created.noted {
        human.push_str(&format!("\nnoted on {commit} (git log --notes=hpp)"));
    }
    let mut outcome = Outcome::document(args.format.json, &created, human, exit);
    if let Some(drift) =
        crate::cli::drift::note(ctx.store()?, &record.snapshot.tree, "this attestation")?
    {
        outcome = outcome.warn(drift);
    }
    for kept in &created.secrets_kept {
        outcome = outcome.warn(format!(
            "{} holds {} that HEAD does not; git hpp push will hold {} back (remove it from the file, delete the record with git update-ref -d, and attest again)",
            kept.path, kept.shape, created.attestation_ref
        ));
    }
    Ok(match warning {
        Some(warning) => outcome.warn(warning),
        None => outcome,
    })
}

/// The principal that signed the record, if it was signed.
fn record_signer(created: &attest::Created) -> Option<&str> {
    created.record.signer.as_deref()
}
