//! The EXAMPLES of every command: shown at the end of `--help` and as the EXAMPLES section of
//! each manual page (`git-hpp-event-append(1)`).
//!
//! Keyed by the page name (`git-hpp`, `git-hpp-event-append`, `hop-land`). Each example is one
//! command line a user types, with a sentence saying what it does. The tests parse every line
//! with the same clap tree as the binary and run the read-only ones in a sandbox repository, so
//! an example that names a flag no longer there fails the build's tests.

/// One example: what it does, and the command line.
pub type Example = (&'static str, &'static str);

/// Every page's examples, by page name.
pub const EXAMPLES: &[(&str, &[Example])] = &[
    (
        "git-hpp",
        &[
            ("Where the loop on this branch stands", "git hpp status"),
            ("Whether HEAD's records verify", "git hpp verify"),
            ("A tour in a throwaway repository", "git hpp demo"),
        ],
    ),
    (
        "git-hpp-event",
        &[("The events of the loop on this branch", "git hpp event log")],
    ),
    (
        "git-hpp-event-append",
        &[
            (
                "Start work on an item (the scope gate)",
                "git hpp event append --type work_started --work ITEM-1 --maker agent-a",
            ),
            (
                "Start a second work item on the same branch, in a loop of its own",
                "git hpp event append --loop item-2 --type work_started --work ITEM-2 --maker agent-a",
            ),
            (
                "Record a person's approval, signed",
                "git hpp event append --type human_approved --by alice --sign-key alice.key",
            ),
            ("Close the loop", "git hpp event append --type verified"),
        ],
    ),
    (
        "git-hpp-event-verify",
        &[
            ("Verify the chain and every gate", "git hpp event verify"),
            (
                "The same, as JSON, for another loop",
                "git hpp event verify --loop item-2 --json",
            ),
        ],
    ),
    (
        "git-hpp-event-log",
        &[
            ("The events, oldest first", "git hpp event log"),
            ("As JSON", "git hpp event log --json"),
        ],
    ),
    (
        "git-hpp-event-export",
        &[(
            "Write the Python harness's events.jsonl",
            "git hpp event export",
        )],
    ),
    (
        "git-hpp-event-import",
        &[(
            "Import a Python harness log as a new loop",
            "git hpp event import events.jsonl --loop imported",
        )],
    ),
    (
        "git-hpp-event-reconcile",
        &[(
            "Keep this machine's side of a diverged loop (the other is preserved)",
            "git hpp event reconcile --keep ours",
        )],
    ),
    (
        "git-hpp-evidence",
        &[("Every evidence bundle", "git hpp evidence list")],
    ),
    (
        "git-hpp-evidence-run",
        &[
            (
                "Run the tests as evidence and record the event",
                "git hpp evidence run --id unit --record-event -- cargo test",
            ),
            (
                "Keep a report the command writes",
                "git hpp evidence run --id report --artifact out/report.txt -- make report",
            ),
        ],
    ),
    (
        "git-hpp-evidence-verify",
        &[(
            "Re-check a bundle against the repository now",
            "git hpp evidence verify unit",
        )],
    ),
    (
        "git-hpp-evidence-list",
        &[
            ("Every bundle", "git hpp evidence list"),
            ("As JSON", "git hpp evidence list --json"),
        ],
    ),
    (
        "git-hpp-evidence-show",
        &[("One bundle's record", "git hpp evidence show unit")],
    ),
    (
        "git-hpp-evidence-mutate",
        &[(
            "Check that the criterion kills the mutants",
            "git hpp evidence mutate --id unit --mutants mutants.json -- python3 check.py",
        )],
    ),
    (
        "git-hpp-evidence-export",
        &[(
            "The newest bundle of id unit as an in-toto test result",
            "git hpp evidence export unit --format in-toto",
        )],
    ),
    (
        "git-hpp-evidence-import",
        &[
            (
                "Import the Python harness's evidence records",
                "git hpp evidence import .hpp/evidence/unit.json",
            ),
            (
                "Import a CI's signed in-toto test result as evidence",
                "git hpp evidence import --format in-toto ci.intoto.jsonl --id ci --allowed-signers allowed_signers",
            ),
        ],
    ),
    (
        "git-hpp-attest",
        &[(
            "Verify the attestations of HEAD's tree",
            "git hpp attest verify",
        )],
    ),
    (
        "git-hpp-attest-create",
        &[(
            "A checker approves the workspace tree, signed",
            "git hpp attest create --spec SPEC.md --maker agent-a --checker checker-b --session review:1 --verdict approved --sign-key checker.key",
        )],
    ),
    (
        "git-hpp-attest-export",
        &[
            (
                "HEAD's attestations as an in-toto bundle",
                "git hpp attest export --format in-toto",
            ),
            (
                "Those of a release tag",
                "git hpp attest export v1.0 --format in-toto",
            ),
        ],
    ),
    (
        "git-hpp-attest-import",
        &[(
            "Import the Python harness's attestation files",
            "git hpp attest import .hpp/attestations/review.json",
        )],
    ),
    (
        "git-hpp-attest-verify",
        &[
            ("The attestations of HEAD's tree", "git hpp attest verify"),
            (
                "Of another commit, as JSON",
                "git hpp attest verify --commit HEAD~1 --json",
            ),
        ],
    ),
    (
        "git-hpp-verify",
        &[
            ("Is HEAD verified?", "git hpp verify"),
            ("Every commit of a range", "git hpp verify main..HEAD"),
            (
                "With the signers a reviewer trusts",
                "git hpp verify HEAD --allowed-signers allowed_signers --json",
            ),
        ],
    ),
    (
        "git-hpp-trust",
        &[("The policy in force", "git hpp trust show")],
    ),
    (
        "git-hpp-trust-init",
        &[(
            "Start a policy with one root (prints the plan; --apply writes it)",
            "git hpp trust init --root alice --key alice.key.pub --sign-key alice.key",
        )],
    ),
    (
        "git-hpp-trust-add",
        &[(
            "Let checker-b sign verdicts",
            "git hpp trust add checker-b --key checker.key.pub --role checker --sign-key alice.key --apply",
        )],
    ),
    (
        "git-hpp-trust-remove",
        &[
            (
                "Take a principal out",
                "git hpp trust remove checker-b --sign-key alice.key --apply",
            ),
            (
                "Take one role, keep the others",
                "git hpp trust remove alice --role root --sign-key alice.key --apply",
            ),
        ],
    ),
    (
        "git-hpp-trust-show",
        &[
            ("The policy in force", "git hpp trust show"),
            ("As JSON", "git hpp trust show --json"),
        ],
    ),
    (
        "git-hpp-trust-pin",
        &[(
            "Trust the policy by its current root's fingerprint, before the first fetch",
            "git hpp trust pin SHA256:AAAAexample --apply",
        )],
    ),
    (
        "git-hpp-trust-seal",
        &[(
            "Seal a log an earlier git-hpp wrote, so no older policy can be replayed",
            "git hpp trust seal --sign-key alice.key --apply",
        )],
    ),
    (
        "git-hpp-trust-set",
        &[(
            "Protect main: a push must be verified",
            "git hpp trust set --protect main --sign-key alice.key --apply",
        )],
    ),
    (
        "git-hpp-push",
        &[
            ("Push the records to origin", "git hpp push"),
            ("To another remote, as JSON", "git hpp push upstream --json"),
        ],
    ),
    (
        "git-hpp-fetch",
        &[
            ("Fetch and verify the records of origin", "git hpp fetch"),
            ("Of another remote", "git hpp fetch upstream"),
        ],
    ),
    (
        "git-hpp-remote",
        &[("Show the refspecs to add", "git hpp remote setup origin")],
    ),
    (
        "git-hpp-remote-setup",
        &[
            ("Show the refspecs to add", "git hpp remote setup origin"),
            ("Add them", "git hpp remote setup origin --apply"),
        ],
    ),
    (
        "git-hpp-hooks",
        &[(
            "Whether the pre-push gate is installed",
            "git hpp hooks status",
        )],
    ),
    (
        "git-hpp-hooks-install",
        &[
            ("Show the plan", "git hpp hooks install"),
            ("Install the pre-push gate", "git hpp hooks install --apply"),
            (
                "Install the pre-receive gate in a bare repository",
                "git hpp hooks install --server --apply",
            ),
        ],
    ),
    (
        "git-hpp-hooks-status",
        &[(
            "Whether the gate is installed",
            "git hpp hooks status --json",
        )],
    ),
    (
        "git-hpp-policy",
        &[(
            "Classify a command",
            "git hpp policy check --mode audit --command 'rm -rf build'",
        )],
    ),
    (
        "git-hpp-policy-check",
        &[(
            "Block, ask or allow, with exit codes",
            "git hpp policy check --mode enforce --command 'git push --force'",
        )],
    ),
    (
        "git-hpp-policy-hook",
        &[(
            "As Claude Code's PreToolUse hook (reads the hook's JSON on stdin)",
            "git hpp policy hook --host claude-code",
        )],
    ),
    (
        "git-hpp-work",
        &[("The waves of a spec", "git hpp work waves spec.json")],
    ),
    (
        "git-hpp-work-plan",
        &[(
            "A WorkGraph plan as Mermaid",
            "git hpp work plan spec.json --format mermaid",
        )],
    ),
    (
        "git-hpp-work-waves",
        &[("The waves as JSON", "git hpp work waves spec.json")],
    ),
    (
        "git-hpp-work-coverage",
        &[(
            "Which requirements the tests cover",
            "git hpp work coverage spec.json --tests tests",
        )],
    ),
    (
        "git-hpp-context",
        &[(
            "Fit blocks into 2000 tokens",
            "git hpp context compile inputs.json --budget 2000",
        )],
    ),
    (
        "git-hpp-context-compile",
        &[(
            "Fit blocks into 2000 tokens",
            "git hpp context compile inputs.json --budget 2000",
        )],
    ),
    (
        "git-hpp-cite",
        &[(
            "Check an answer's citations",
            "git hpp cite check --text answer.md --context context.json",
        )],
    ),
    (
        "git-hpp-cite-check",
        &[(
            "Check an answer's citations",
            "git hpp cite check --text answer.md --context context.json",
        )],
    ),
    (
        "git-hpp-retrieval",
        &[(
            "Measure a retriever",
            "git hpp retrieval eval suite.json -k 3",
        )],
    ),
    (
        "git-hpp-retrieval-eval",
        &[(
            "Recall at 3 of a retriever command",
            "git hpp retrieval eval suite.json -k 3 --min-recall 0.8",
        )],
    ),
    (
        "git-hpp-decide",
        &[(
            "Validate a typed decision",
            "git hpp decide validate decision.json",
        )],
    ),
    (
        "git-hpp-decide-validate",
        &[(
            "Validate a typed decision",
            "git hpp decide validate decision.json",
        )],
    ),
    (
        "git-hpp-decide-eval",
        &[("Measure a decider", "git hpp decide eval suite.json")],
    ),
    (
        "git-hpp-findings",
        &[(
            "Check review findings",
            "git hpp findings check findings.json",
        )],
    ),
    (
        "git-hpp-findings-check",
        &[(
            "Check findings against the change they review",
            "git hpp findings check findings.json --subject change.diff",
        )],
    ),
    (
        "git-hpp-route",
        &[(
            "Pick a provider for a request",
            "git hpp route --request request.json --providers providers.json",
        )],
    ),
    (
        "git-hpp-eval",
        &[("pass@5 of a suite", "git hpp eval run suite.json -k 5")],
    ),
    (
        "git-hpp-eval-run",
        &[(
            "pass^k as a regression gate",
            "git hpp eval run suite.json -k 5 --gate regression",
        )],
    ),
    (
        "git-hpp-benchmark",
        &[("The packaged controls", "git hpp benchmark --json")],
    ),
    (
        "git-hpp-status",
        &[
            ("Where the loop on this branch stands", "git hpp status"),
            (
                "Another loop, as JSON",
                "git hpp status --loop item-2 --json",
            ),
        ],
    ),
    (
        "git-hpp-resume",
        &[("What to do next, to pick the work up", "git hpp resume")],
    ),
    (
        "git-hpp-loops",
        &[
            ("Every loop and its state", "git hpp loops"),
            ("As JSON", "git hpp loops --json"),
        ],
    ),
    (
        "git-hpp-snapshot",
        &[
            ("The workspace tree records bind", "git hpp snapshot"),
            ("And which files are in it", "git hpp snapshot --explain"),
        ],
    ),
    (
        "git-hpp-restore",
        &[
            (
                "What the newest checkpoint would bring back",
                "git hpp restore",
            ),
            ("Every checkpoint, oldest first", "git hpp restore --list"),
            ("Write it back", "git hpp restore --apply"),
        ],
    ),
    (
        "git-hpp-demo",
        &[("The tour, kept afterwards", "git hpp demo --keep")],
    ),
    (
        "git-hpp-deliberate",
        &[(
            "Plan a House Session",
            "git hpp deliberate plan question.json --out panel.json",
        )],
    ),
    (
        "git-hpp-deliberate-plan",
        &[(
            "Plan a House Session",
            "git hpp deliberate plan question.json --out panel.json",
        )],
    ),
    (
        "git-hpp-deliberate-validate",
        &[("Validate a panel", "git hpp deliberate validate panel.json")],
    ),
    (
        "git-hpp-deliberate-tally",
        &[(
            "Tally the turns",
            "git hpp deliberate tally --panel panel.json --turns turns.json",
        )],
    ),
    (
        "git-hpp-deliberate-stop",
        &[(
            "Whether a stop rule fired",
            "git hpp deliberate stop --panel panel.json --turns turns.json",
        )],
    ),
    (
        "git-hpp-deliberate-record",
        &[(
            "Seal the session",
            "git hpp deliberate record --panel panel.json --turns turns.json --judge judge.json --out record.json",
        )],
    ),
    (
        "git-hpp-deliberate-run",
        &[(
            "Run each seat's command round by round",
            "git hpp deliberate run --panel panel.json --seats seats.json",
        )],
    ),
    (
        "git-hpp-deliberate-verify",
        &[(
            "Verify a sealed record",
            "git hpp deliberate verify record.json",
        )],
    ),
    (
        "git-hpp-deliberate-decide",
        &[(
            "A person's decision beside the seal",
            "git hpp deliberate decide record.json --value ship --by alice",
        )],
    ),
    ("git-hpp-map", &[("The lanes as a map", "git hpp map lane")]),
    (
        "git-hpp-map-lane",
        &[(
            "The lanes from refs, as Mermaid",
            "git hpp map lane --format mermaid",
        )],
    ),
    (
        "git-hpp-map-agent",
        &[("The agents of the manifest", "git hpp map agent")],
    ),
    (
        "git-hpp-map-monitor",
        &[("The monitors and their freshness", "git hpp map monitor")],
    ),
    (
        "git-hpp-map-context",
        &[(
            "Context budgets",
            "git hpp map context inputs.json --budget 2000",
        )],
    ),
    (
        "git-hpp-graph",
        &[(
            "The manifest's capability view as Mermaid",
            "git hpp graph --view capability --format mermaid",
        )],
    ),
    (
        "git-hpp-atlas",
        &[(
            "One static page of everything",
            "git hpp atlas --html atlas.html",
        )],
    ),
    ("git-hpp-lane", &[("Every lane", "git hpp lane list")]),
    (
        "git-hpp-lane-start",
        &[(
            "A worktree for a second agent, owning src/api",
            "git hpp lane start api --territory src/api --model model-b",
        )],
    ),
    (
        "git-hpp-lane-heartbeat",
        &[("Say this lane is alive", "git hpp lane heartbeat api")],
    ),
    (
        "git-hpp-lane-list",
        &[
            ("Every lane and its liveness", "git hpp lane list"),
            ("As JSON", "git hpp lane list --json"),
        ],
    ),
    (
        "git-hpp-lane-close",
        &[(
            "Close a lane, keeping its worktree",
            "git hpp lane close api --keep-worktree",
        )],
    ),
    (
        "git-hpp-lane-guard",
        &[(
            "As a PreToolUse hook: refuse edits outside the lane's territory",
            "git hpp lane guard --host claude-code",
        )],
    ),
    (
        "git-hpp-lane-review-guard",
        &[(
            "Prove a checker's command read-only",
            "git hpp lane review-guard -- cargo test",
        )],
    ),
    ("git-hpp-board", &[("The board", "git hpp board status")]),
    (
        "git-hpp-board-claim",
        &[(
            "Claim an item",
            "git hpp board claim ITEM-1 --lane api --model model-b",
        )],
    ),
    (
        "git-hpp-board-set",
        &[(
            "Move an item to review",
            "git hpp board set ITEM-1 UNDER-REVIEW --lane api --model model-b --role maker",
        )],
    ),
    (
        "git-hpp-board-compete",
        &[(
            "Best of two",
            "git hpp board compete --task T-1 --items ITEM-1,ITEM-2 --lane ops --model model-a",
        )],
    ),
    (
        "git-hpp-board-select",
        &[(
            "Pick the winner",
            "git hpp board select --task T-1 --winner ITEM-1 --lane ops --model model-a",
        )],
    ),
    (
        "git-hpp-board-withdraw",
        &[(
            "Withdraw a competitor",
            "git hpp board withdraw --task T-1 --item ITEM-2 --lane ops --model model-a --reason duplicate",
        )],
    ),
    (
        "git-hpp-board-release-fix",
        &[(
            "Send an item back to its maker",
            "git hpp board release-fix ITEM-1 --target-lane api --lane review --model model-c",
        )],
    ),
    (
        "git-hpp-board-start-review",
        &[(
            "Start reviewing an item",
            "git hpp board start-review ITEM-1 --target-lane api --lane review --model model-c",
        )],
    ),
    (
        "git-hpp-board-approve",
        &[("A person approves an item", "git hpp board approve ITEM-1")],
    ),
    (
        "git-hpp-board-status",
        &[("The board, or one item", "git hpp board status ITEM-1")],
    ),
    (
        "git-hpp-board-render",
        &[("The board as a table", "git hpp board render")],
    ),
    (
        "git-hpp-checker",
        &[(
            "A checker of another provider than the maker",
            "git hpp checker route --maker claude",
        )],
    ),
    (
        "git-hpp-checker-route",
        &[(
            "A checker of another provider than the maker",
            "git hpp checker route --maker claude --json",
        )],
    ),
    (
        "git-hpp-doctor",
        &[
            ("Check the manifest, hooks and store", "git hpp doctor"),
            ("The host matrix", "git hpp doctor --matrix"),
        ],
    ),
    (
        "git-hpp-init",
        &[
            (
                "Show the six stages for Claude Code",
                "git hpp init --host claude-code --non-interactive",
            ),
            (
                "Apply them",
                "git hpp init --host claude-code --non-interactive --apply",
            ),
        ],
    ),
    (
        "git-hpp-install",
        &[
            (
                "Show what a bundle installs",
                "git hpp install --host claude-code --bundle core",
            ),
            (
                "Install one module for Codex",
                "git hpp install --host codex --module gotcha-memory --apply",
            ),
        ],
    ),
    (
        "git-hpp-module",
        &[(
            "Check a module's checksums",
            "git hpp module checksums --check",
        )],
    ),
    (
        "git-hpp-module-checksums",
        &[
            (
                "Check the modules' checksums",
                "git hpp module checksums --check",
            ),
            (
                "Rewrite them",
                "git hpp module checksums modules/lane-kit --apply",
            ),
        ],
    ),
    (
        "git-hpp-handoff",
        &[("The latest handoff", "git hpp handoff show")],
    ),
    (
        "git-hpp-handoff-write",
        &[(
            "Leave a handoff for the next session",
            "git hpp handoff write --summary 'parser done' --next 'wire the CLI'",
        )],
    ),
    (
        "git-hpp-handoff-show",
        &[("The latest handoff", "git hpp handoff show --json")],
    ),
    (
        "git-hpp-handoff-hook",
        &[(
            "As a SessionStart hook",
            "git hpp handoff hook --host claude-code --event SessionStart",
        )],
    ),
    (
        "git-hpp-gotcha",
        &[("Recurring failures", "git hpp gotcha list")],
    ),
    (
        "git-hpp-gotcha-record",
        &[(
            "Record a failure",
            "git hpp gotcha record --task build --message 'linker ran out of memory'",
        )],
    ),
    (
        "git-hpp-gotcha-list",
        &[("Every failure recorded", "git hpp gotcha list --failures")],
    ),
    (
        "git-hpp-gotcha-preamble",
        &[(
            "The preamble a session starts with",
            "git hpp gotcha preamble --task build",
        )],
    ),
    (
        "git-hpp-gotcha-hook",
        &[(
            "As a PostToolUse hook",
            "git hpp gotcha hook --host claude-code --event PostToolUse",
        )],
    ),
    (
        "git-hpp-install-man",
        &[
            (
                "Install the manual beside the binary",
                "git hpp install-man",
            ),
            (
                "Anywhere on MANPATH",
                "git hpp install-man ~/.local/share/man",
            ),
        ],
    ),
    (
        "git-hpp-completions",
        &[
            (
                "Bash (git hpp <TAB> through git's own completion)",
                "git hpp completions bash",
            ),
            ("Zsh", "git hpp completions zsh"),
            ("Fish", "git hpp completions fish"),
        ],
    ),
    (
        "git-hpp-monitor",
        &[("Run the probes that are due", "git hpp monitor probe --due")],
    ),
    (
        "git-hpp-monitor-probe",
        &[
            ("Run the probes that are due", "git hpp monitor probe --due"),
            (
                "One probe, as JSON",
                "git hpp monitor probe --id api-health --json",
            ),
        ],
    ),
    ("hop", &[("Where every agent stands", "hop status")]),
    ("hop-init", &[("Start Hop in this repository", "hop init")]),
    (
        "hop-start",
        &[(
            "Give an agent a workspace and a prompt",
            "hop start --agent agent-a 'add the parser'",
        )],
    ),
    (
        "hop-env",
        &[(
            "A state's workspace, for a shell",
            "hop env P_7Q2M4K8XRZ3N5T6V9W2C4B0",
        )],
    ),
    (
        "hop-prompt",
        &[(
            "A follow-up prompt on a state",
            "hop prompt --from C_7Q2M4K8XRZ3N5T6V9W2C4B0 'now the tests'",
        )],
    ),
    (
        "hop-land",
        &[(
            "Land a proposal into main when the tests pass",
            "hop land R_7Q2M4K8XRZ3N5T6V9W2C4B0 --branch main -- cargo test",
        )],
    ),
    ("hop-undo", &[("Undo the last landing", "hop undo")]),
    (
        "hop-state",
        &[("One state", "hop state C_7Q2M4K8XRZ3N5T6V9W2C4B0 --json")],
    ),
    ("hop-status", &[("Every agent and state", "hop status")]),
    (
        "hop-checkpoint",
        &[(
            "Checkpoint a workspace",
            "hop checkpoint P_7Q2M4K8XRZ3N5T6V9W2C4B0",
        )],
    ),
    (
        "hop-check",
        &[(
            "Run a check on a state",
            "hop check C_7Q2M4K8XRZ3N5T6V9W2C4B0 -- cargo test",
        )],
    ),
    (
        "hop-propose",
        &[(
            "Propose a state for landing",
            "hop propose C_7Q2M4K8XRZ3N5T6V9W2C4B0 --summary 'parser and tests'",
        )],
    ),
    (
        "hop-diff",
        &[(
            "What a state changed",
            "hop diff C_7Q2M4K8XRZ3N5T6V9W2C4B0 --base",
        )],
    ),
    ("hop-history", &[("The accepted chain", "hop history")]),
    (
        "hop-graph",
        &[("The states as Mermaid", "hop graph --format mermaid")],
    ),
    ("hop-doctor", &[("Check the Hop store", "hop doctor")]),
    ("hop-skill", &[("The agent skill", "hop skill print")]),
    ("hop-skill-print", &[("The agent skill", "hop skill print")]),
    (
        "hop-skill-install",
        &[("Install the skill for Claude Code", "hop skill install")],
    ),
];

/// Returns the examples of the page `name`, if it has any.
pub fn of(name: &str) -> Option<&'static [Example]> {
    EXAMPLES
        .iter()
        .find(|(page, _)| *page == name)
        .map(|(_, examples)| *examples)
}

/// Returns the examples of `name` as the text `--help` ends with.
pub fn as_help(name: &str) -> Option<String> {
    let examples = of(name)?;
    let mut text = String::from("Examples:\n");
    for (what, command) in examples {
        text.push_str(&format!("  # {what}\n  {command}\n"));
    }
    Some(text.trim_end().to_owned())
}

/// Returns the examples of `name` as a roff EXAMPLES section, if it has any.
pub fn as_roff(name: &str) -> Option<String> {
    let examples = of(name)?;
    let mut roff = String::from(".SH EXAMPLES\n");
    for (what, command) in examples {
        roff.push_str(&format!(
            ".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
            escape(what),
            escape(command)
        ));
    }
    Some(roff)
}

/// Escapes text for a roff line: backslashes, hyphens (so `--flag` stays two hyphens a reader
/// can copy), and a leading dot or quote that roff would read as a request.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// Adds each command's examples to its `--help` (long help), under `page`, recursively.
pub fn attach(command: clap::Command, page: &str) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut command = match as_help(page) {
        Some(text) => command.after_long_help(text),
        None => command,
    };
    for name in names {
        let child = format!("{page}-{name}");
        command = command.mut_subcommand(&name, |sub| attach(sub, &child));
    }
    command
}
