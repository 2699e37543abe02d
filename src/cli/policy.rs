//! `git hpp policy check|hook`: classify a command with the command policy (CONCEPTS.md
//! "command policy"), from the command line or from an agent host's PreToolUse hook.
//!
//! Neither verb opens a repository: they read `--policy FILE` or `./.hpp/policy.json` from the
//! working directory, and work outside any git repository. Only a command that deletes a tree
//! or discards work beyond the reference's reading makes them ask git what is there
//! ([`hpp_store::probe`]), and which rules are in force (`--rules`, else `hpp.policyRules`).

use std::path::Path;

use clap::{Subcommand, ValueEnum};
use serde_json::json;

use super::HostArg;
use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{HookNoun, JsonRoot, read_hook_input, read_json};
use super::output::Outcome;
use hpp_core::host::{Answer, Blank, Event, EventName, Permission};
use hpp_core::policy::{self, Action, Policy, Rules, Verdict, Workspace};

/// The `policy` verbs.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Classify a command as ALLOW, MANUAL or BLOCK
    ///
    /// Prints {"mode", "policy", "action", "rule", "reason", "source"} as JSON. The built-in rules
    /// come first; a project policy file (hpp.policy/v1) can only add BLOCK or MANUAL rules and
    /// raise built-in MANUAL rules to BLOCK. Exit codes: audit 0 always; enforce 2 for BLOCK, 1 for
    /// MANUAL, 0 for ALLOW; a refused policy file exits 2 in either mode with nothing on stdout.
    /// Reads no repository.
    Check(PolicyCheckArgs),
    /// Answer an agent host's PreToolUse hook with the policy
    ///
    /// Reads the hook's JSON on stdin and classifies tool_input.command of a Bash tool call. In
    /// enforce mode BLOCK answers deny and MANUAL answers ask (deny on Codex, which cannot ask);
    /// ALLOW prints nothing, so the host's own permission rules still decide. Audit mode never
    /// answers: it prints a non-ALLOW verdict as a warning on stderr. Other tools get no answer.
    /// Exit codes: 0 answered; 2 malformed input or a refused policy file (the host blocks the
    /// call).
    Hook(PolicyHookArgs),
}

/// What a verdict does to the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Print the verdict and exit 0.
    Audit,
    /// BLOCK exits 2, MANUAL exits 1, ALLOW exits 0.
    Enforce,
}

/// The arguments of `git hpp policy check`.
#[derive(Debug, clap::Args)]
pub struct PolicyCheckArgs {
    /// audit prints the verdict and exits 0; enforce exits with the verdict's code
    #[arg(long, value_enum)]
    mode: Mode,
    /// The command to classify, as one shell string
    #[arg(long, value_name = "CMD", allow_hyphen_values = true)]
    command: String,
    /// Project policy file (hpp.policy/v1) [default: ./.hpp/policy.json if it exists]
    #[arg(long, value_name = "FILE")]
    policy: Option<std::path::PathBuf>,
    /// full also reads rm -r, find -exec rm, git clean/reset --hard/restore and interpreter
    /// deletes; reference keeps the Python harness's verdicts [default: git config
    /// hpp.policyRules, else full]
    #[arg(long, value_enum, value_name = "RULES")]
    rules: Option<RulesArg>,
}

/// Which reading of destructive commands is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesArg {
    /// Every spelling of a recursive delete or a discard of work, where work is there
    Full,
    /// The Python harness's verdicts
    Reference,
}

/// The arguments of `git hpp policy hook`.
#[derive(Debug, clap::Args)]
pub struct PolicyHookArgs {
    /// The host whose hook protocol to answer in
    #[arg(long, value_enum)]
    host: HostArg,
    /// enforce answers deny or ask; audit only warns on stderr
    #[arg(long, value_enum, default_value = "enforce")]
    mode: Mode,
    /// Project policy file (hpp.policy/v1) [default: ./.hpp/policy.json if it exists]
    #[arg(long, value_name = "FILE")]
    policy: Option<std::path::PathBuf>,
    /// full or reference, as for `policy check` [default: git config hpp.policyRules, else full]
    #[arg(long, value_enum, value_name = "RULES")]
    rules: Option<RulesArg>,
    /// Take no checkpoint before a call that may run (also: git config
    /// hpp.checkpoint.beforeCommands false)
    #[arg(long)]
    no_checkpoint: bool,
}

/// Runs one `policy` verb.
pub fn dispatch(ctx: &Ctx, command: PolicyCommand) -> Result<Outcome, CliError> {
    match command {
        PolicyCommand::Check(args) => cmd_policy_check(ctx, &args),
        PolicyCommand::Hook(args) => cmd_policy_hook(ctx, &args),
    }
}

/// Classifies `--command` and prints the verdict.
pub fn cmd_policy_check(ctx: &Ctx, args: &PolicyCheckArgs) -> Result<Outcome, CliError> {
    let (policy, shown) = load_policy(ctx, args.policy.as_deref())?;
    let verdict = classify(ctx.cwd(), &policy, &args.command, args.rules)?;
    let exit = match (args.mode, verdict.action) {
        (Mode::Audit, _) | (Mode::Enforce, Action::Allow) => Exit::Ok,
        (Mode::Enforce, Action::Manual) => Exit::Warn,
        (Mode::Enforce, Action::Block) => Exit::Block,
    };
    let value = json!({
        "mode": args.mode,
        "policy": shown,
        "action": verdict.action,
        "rule": verdict.rule,
        "reason": verdict.reason,
        "source": verdict.source,
    });
    Ok(Outcome::json(&value, exit))
}

/// Answers one PreToolUse hook call.
pub fn cmd_policy_hook(ctx: &Ctx, args: &PolicyHookArgs) -> Result<Outcome, CliError> {
    let (policy, _) = load_policy(ctx, args.policy.as_deref())?;
    let input = read_hook_input(ctx, Blank::Refused, HookNoun::Input)?;
    match &input.event {
        EventName::Absent => {}
        name if name.is(Event::PreToolUse) => {}
        other => {
            return Err(CliError::refused(format!(
                "the policy hook answers PreToolUse only, not hook_event_name {other}"
            )));
        }
    }
    let Some(command) = input.bash_command()? else {
        return Outcome::answer(Answer::Silent);
    };
    // Paths are read where the command runs: the directory the agent works in.
    let dir = input.dir(ctx.cwd());
    let verdict = classify(&dir, &policy, command, args.rules)?;
    let said = format!(
        "{} by git hpp policy (rule {}, {}): {}",
        verdict.action,
        verdict.rule,
        source_name(&verdict),
        verdict.reason
    );
    let answer = match (args.mode, verdict.action) {
        (_, Action::Allow) => Answer::Silent,
        (Mode::Audit, _) => {
            let outcome = Outcome::answer(Answer::Silent)?.warn(format!("audit: {said}"));
            return Ok(checkpoint(ctx, args, &input, command, outcome));
        }
        (Mode::Enforce, Action::Block) => Answer::permission(Permission::Deny, said),
        (Mode::Enforce, Action::Manual) => args.host.0.ask(said),
    };
    // A call that may run (allowed, or asked about on a host that can ask) gets a checkpoint.
    let runs = verdict.action == Action::Allow
        || (verdict.action == Action::Manual && args.host.0 == hpp_core::host::Host::ClaudeCode);
    let outcome = Outcome::answer(answer)?;
    Ok(if runs {
        checkpoint(ctx, args, &input, command, outcome)
    } else {
        outcome
    })
}

/// Before a call the policy cannot prove harmless, in a repository with a worktree: a command
/// checkpoint of the workspace ([`crate::continuity_checkpoint::before_command`]). It never
/// changes the answer; a checkpoint that cannot be written is a warning on stderr.
fn checkpoint(
    ctx: &Ctx,
    args: &PolicyHookArgs,
    input: &hpp_core::host::HookInput,
    command: &str,
    outcome: Outcome,
) -> Outcome {
    if args.no_checkpoint || policy::read_only(command) {
        return outcome;
    }
    let Ok(store) = hpp_store::Store::discover(&input.dir(ctx.cwd())) else {
        return outcome;
    };
    if store.workdir().is_none()
        || store.config_bool("hpp.checkpoint.beforeCommands") == Some(false)
    {
        return outcome;
    }
    let session = input.session_id.as_deref().unwrap_or("solo");
    let now = time::OffsetDateTime::now_utc();
    match crate::continuity_checkpoint::before_command(&store, session, now, command) {
        Ok(_) => outcome,
        Err(e) => outcome.warn(format!(
            "policy gate: no checkpoint before this call ({e}); `git hpp restore` cannot bring back what it changes"
        )),
    }
}

/// The working directory, asked through git what a command would destroy there.
struct GitWorkspace<'a>(&'a Path);

impl Workspace for GitWorkspace<'_> {
    fn holds_work(&self, path: &str) -> Option<bool> {
        hpp_store::probe::holds_work(self.0, path)
    }
    fn has_uncommitted(&self, pathspecs: &[String]) -> Option<bool> {
        hpp_store::probe::has_uncommitted(self.0, pathspecs)
    }
    fn clean_removes_work(&self, args: &[String]) -> Option<bool> {
        hpp_store::probe::clean_removes_work(self.0, args)
    }
}

/// Classifies `command` as run in `dir`. The rules in force are `--rules`, else git config
/// `hpp.policyRules` there (read only when the command deletes or discards something), else
/// full; a value that is neither is refused.
fn classify(
    dir: &Path,
    policy: &Policy,
    command: &str,
    explicit: Option<RulesArg>,
) -> Result<Verdict, CliError> {
    let rules = match explicit {
        Some(RulesArg::Full) => Rules::Full,
        Some(RulesArg::Reference) => Rules::Reference,
        None if policy::scan(command).deletions.is_empty() => Rules::Full,
        None => match hpp_store::probe::config(dir, "hpp.policyRules").as_deref() {
            None | Some("full") => Rules::Full,
            Some("reference") => Rules::Reference,
            Some(other) => {
                return Err(CliError::refused(format!(
                    "git config hpp.policyRules is {other:?}; expected full or reference"
                )));
            }
        },
    };
    Ok(policy.classify_in(command, rules, &GitWorkspace(dir)))
}

fn source_name(verdict: &Verdict) -> &'static str {
    match verdict.source {
        policy::Source::BuiltIn => "built-in",
        policy::Source::Policy => "policy",
    }
}

/// Reads the project policy: `--policy FILE`, else `./.hpp/policy.json` if it exists, else the
/// built-in rules alone. Returns it with the path to print (`None` for the built-ins).
fn load_policy(ctx: &Ctx, explicit: Option<&Path>) -> Result<(Policy, Option<String>), CliError> {
    let given = match explicit {
        Some(path) => path.to_path_buf(),
        None if ctx.cwd().join(policy::DEFAULT_FILE).is_file() => policy::DEFAULT_FILE.into(),
        None => return Ok((Policy::built_in(), None)),
    };
    let shown = given.display().to_string();
    let value = read_json(ctx, &given, JsonRoot::Object)?;
    let policy = Policy::from_json(&value)
        .map_err(|e| CliError::refused(format!("policy {shown} refused: {e}")))?;
    Ok((policy, Some(shown)))
}
