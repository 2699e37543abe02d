//! The real agent hosts for `real_hosts`: pinned Claude Code and Codex CLI releases installed
//! from the npm registry once (cached under `target/real-hosts/`), and a scripted model server
//! on 127.0.0.1 that answers them turn by turn and keeps every request it was sent.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Run, Sandbox};

/// One agent host, pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Anthropic's Claude Code (`claude -p`), speaking the Messages API.
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex exec`), speaking the Responses API.
    Codex,
}

impl Host {
    /// The npm package and the version every test runs.
    pub fn package(self) -> (&'static str, &'static str) {
        match self {
            Host::ClaudeCode => ("@anthropic-ai/claude-code", "2.1.332"),
            Host::Codex => ("@openai/codex", "0.171.0"),
        }
    }

    /// The `--host` name `git hpp install` takes.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
        }
    }

    fn bin(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude",
            Host::Codex => "codex",
        }
    }

    /// The installed client's executable, installing it on first use; `None` (with a loud
    /// `SKIPPED:` line on stderr) when node or npm is missing. An install that fails with npm
    /// present panics: that is a real breakage, never a skip.
    pub fn client(self) -> Option<PathBuf> {
        static CLAUDE: OnceLock<Option<PathBuf>> = OnceLock::new();
        static CODEX: OnceLock<Option<PathBuf>> = OnceLock::new();
        let cell = match self {
            Host::ClaudeCode => &CLAUDE,
            Host::Codex => &CODEX,
        };
        let found = cell.get_or_init(|| install(self)).clone();
        if found.is_none() {
            let (pkg, version) = self.package();
            loud(&format!(
                "SKIPPED: real-host test for {pkg}@{version}: node and npm are needed to install it"
            ));
        }
        found
    }
}

/// Writes `line` straight to the process's stderr: the test harness captures `eprintln!` of a
/// test that passes, and a skip must never be silent.
#[expect(
    clippy::disallowed_methods,
    reason = "a skip is reported past the test harness's capture"
)]
fn loud(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Installs `host`'s package into `target/real-hosts/<pkg>@<version>` under a lock file, so
/// parallel tests and test processes install it once; later runs reuse it.
fn install(host: Host) -> Option<PathBuf> {
    if !runs("node") || !runs("npm") {
        return None;
    }
    let (pkg, version) = host.package();
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory holds tmp/")
        .join("real-hosts");
    std::fs::create_dir_all(&cache).expect("target/real-hosts can be created");
    let dir = cache.join(format!(
        "{}@{version}",
        pkg.trim_start_matches('@').replace('/', "-")
    ));
    let bin = dir.join("node_modules/.bin").join(host.bin());
    let marker = dir.join(".installed");
    let lock = File::create(cache.join(format!("{}.lock", host.bin())))
        .expect("the lock file can be created");
    lock.lock().expect("the install lock is taken");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the install directory can be created");
        let started = Instant::now();
        let out = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&dir)
            .arg(format!("{pkg}@{version}"))
            .current_dir(&dir)
            .output()
            .expect("npm runs");
        assert!(
            out.status.success() && bin.exists(),
            "npm install {pkg}@{version} failed (npm is here, so this is a breakage):\n{}",
            Run::from_output(&out)
        );
        std::fs::write(&marker, format!("{pkg}@{version}\n")).expect("the marker is written");
        loud(&format!(
            "real hosts: installed {pkg}@{version} in {:.1?} (cached for later runs)",
            started.elapsed()
        ));
    }
    lock.unlock().expect("the install lock is released");
    Some(bin)
}

/// One tool call the scripted model asks for, in either host's tool vocabulary.
#[derive(Clone, Debug)]
pub enum Call {
    /// Run a shell command (Claude Code's `Bash`, Codex's `exec_command`).
    Shell(String),
    /// Create a file, `path` relative to the repository (Claude Code's `Write`, Codex's
    /// `apply_patch`).
    Write {
        /// The file, relative to the repository's top level.
        path: String,
        /// Its one line of text.
        line: String,
    },
}

/// What the model answers: the calls in order, one per turn, then a closing text.
#[derive(Clone, Debug)]
pub struct Script {
    /// The repository the client runs in (Claude Code's Write takes an absolute path).
    pub root: PathBuf,
    /// The calls, one a turn.
    pub calls: Vec<Call>,
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Request {
    /// `POST /v1/messages?beta=true`, ...
    pub line: String,
    /// The body as sent.
    pub body: String,
}

/// The scripted model server, listening on 127.0.0.1 until the test process ends.
pub struct ModelServer {
    /// The port it listens on.
    pub port: u16,
    log: Arc<Mutex<Vec<Request>>>,
}

/// The script and how many of its calls were handed out: a call is never handed out twice,
/// even when the client's history no longer shows it (after a compaction).
struct Turns {
    script: Script,
    issued: Mutex<usize>,
}

impl Turns {
    /// The call for a request whose history holds `answered` results, if any is left.
    fn next(&self, answered: usize) -> Option<(usize, &Call)> {
        let mut issued = self.issued.lock().expect("the counter is not poisoned");
        let index = answered.max(*issued);
        let call = self.script.calls.get(index)?;
        *issued = index + 1;
        Some((index, call))
    }
}

impl ModelServer {
    /// Starts the server on a free port, answering with `script`.
    pub fn start(script: Script) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("127.0.0.1 has a free port");
        let port = listener.local_addr().expect("a bound address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Turns {
            script,
            issued: Mutex::new(0),
        });
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let script = Arc::clone(&script);
                let log = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve(stream, &script, &log);
                });
            }
        });
        Self { port, log }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().expect("the log is not poisoned").clone()
    }

    /// The model requests (`/v1/messages` or `/v1/responses`), in order.
    pub fn turns(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| {
                r.line.starts_with("POST /v1/messages") && !r.line.contains("count_tokens")
                    || r.line.starts_with("POST /v1/responses")
            })
            .collect()
    }

    /// Whether any model request's body contains `text` (JSON-escaped as the client sent it).
    pub fn saw(&self, text: &str) -> bool {
        self.turns().iter().any(|r| r.body.contains(text))
    }

    /// The requests meant for another host: a proxy's `CONNECT host:port` or an absolute URI
    /// (every proxy variable names this server, which refuses them).
    pub fn escapes(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .map(|r| r.line)
            .filter(|l| {
                l.split(' ')
                    .nth(1)
                    .is_some_and(|target| !target.starts_with('/'))
            })
            .collect()
    }

    /// The requests, shortened, for a failure message.
    pub fn dump(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                let tail: String = r.body.chars().rev().take(1500).collect();
                format!("{} ... {}", r.line, tail.chars().rev().collect::<String>())
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Reads one HTTP/1.1 request (Content-Length or chunked body), logs it and answers it, then
/// closes the connection.
fn serve(stream: TcpStream, script: &Turns, log: &Mutex<Vec<Request>>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end().to_owned();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        if let Some(v) = header.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if header.starts_with("transfer-encoding:") && header.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    log.lock().expect("the log is not poisoned").push(Request {
        line: line.clone(),
        body: body.clone(),
    });
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let (kind, answer) = if line.starts_with("POST /v1/messages/count_tokens") {
        ("application/json", json!({"input_tokens": 1}).to_string())
    } else if line.starts_with("POST /v1/messages") {
        messages(&request, script)
    } else if line.starts_with("POST /v1/responses") {
        ("text/event-stream", responses(&request, script))
    } else if line.split(' ').nth(1).is_some_and(|t| !t.starts_with('/')) {
        let mut out = stream;
        write!(
            out,
            "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )?;
        return out.flush();
    } else if line.starts_with("GET /v1/models") {
        (
            "application/json",
            json!({"data": [], "models": []}).to_string(),
        )
    } else {
        ("application/json", "{}".to_owned())
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    )?;
    out.flush()
}

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// Answers the Messages API: the next scripted call as a `tool_use` (the turn is the number
/// of tool results the client has sent back), or a closing text once the calls are spent or
/// the request offers no tools (a title or a summary).
fn messages(request: &Value, turns: &Turns) -> (&'static str, String) {
    let results = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|c| c["type"] == "tool_result")
        .count();
    let tools = request["tools"].as_array().is_some_and(|t| !t.is_empty());
    let call = if tools { turns.next(results) } else { None };
    let model = request["model"].as_str().unwrap_or("model");
    let block = match call {
        None => json!({"type": "text", "text": "done"}),
        Some((n, Call::Shell(cmd))) => json!({"type": "tool_use", "id": format!("toolu_{n}"),
            "name": "Bash", "input": {"command": cmd}}),
        Some((n, Call::Write { path, line })) => json!({"type": "tool_use",
            "id": format!("toolu_{n}"), "name": "Write",
            "input": {"file_path": turns.script.root.join(path), "content": format!("{line}\n")}}),
    };
    let stop = if call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    };
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    if request["stream"] != true {
        let message = json!({"id": "msg_1", "type": "message", "role": "assistant",
            "model": model, "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": usage});
        return ("application/json", message.to_string());
    }
    let mut out = sse(
        "message_start",
        &json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": usage}}),
    );
    let (start, delta) = match &block["type"] {
        t if t == "text" => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        ),
        _ => (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        ),
    };
    out += &sse(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 0, "content_block": start}),
    );
    out += &sse(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
    );
    out += &sse(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    out += &sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 1}}),
    );
    out += &sse("message_stop", &json!({"type": "message_stop"}));
    ("text/event-stream", out)
}

/// Answers the Responses API as a stream: the next scripted call as a `function_call` of
/// `exec_command` or a `custom_tool_call` of `apply_patch` (the turn is the number of call
/// outputs the client has sent back), or a closing assistant message.
fn responses(request: &Value, turns: &Turns) -> String {
    let outputs = request["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
        .count();
    let item = match turns.next(outputs) {
        None => json!({"type": "message", "role": "assistant", "id": "msg_1",
            "content": [{"type": "output_text", "text": "done"}]}),
        Some((n, Call::Shell(cmd))) => json!({"type": "function_call", "id": format!("fc_{n}"),
            "call_id": format!("call_{n}"), "name": "exec_command",
            "arguments": json!({"cmd": cmd}).to_string()}),
        Some((n, Call::Write { path, line })) => json!({"type": "custom_tool_call",
            "id": format!("ctc_{n}"), "call_id": format!("call_{n}"),
            "name": "apply_patch",
            "input": format!("*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\n")}),
    };
    let mut out = sse(
        "response.created",
        &json!({"type": "response.created", "response": {"id": "resp_1"}}),
    );
    out += &sse(
        "response.output_item.added",
        &json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    );
    out += &sse(
        "response.output_item.done",
        &json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    );
    out += &sse(
        "response.completed",
        &json!({"type": "response.completed", "response": {"id": "resp_1", "usage": {
            "input_tokens": 1, "input_tokens_details": null, "output_tokens": 1,
            "output_tokens_details": null, "total_tokens": 2}}}),
    );
    out
}

/// The modules every real-host test installs.
pub const MODULES: [&str; 4] = [
    "operator-kit",
    "gotcha-memory",
    "continuity-kit",
    "lane-kit",
];

/// Runs `git hpp install --apply` for `host` in the sandbox's repository and wires it the way
/// a user does: Claude Code's printed block into `.claude/settings.json` (Codex's is written
/// to `.codex/hooks.json` by install itself).
pub fn install_modules(sandbox: &Sandbox, host: Host) {
    install_these(sandbox, host, &MODULES);
}

/// As [`install_modules`], with `modules` (health-kit, say, whose probes the other tests do
/// without).
pub fn install_these(sandbox: &Sandbox, host: Host, modules: &[&str]) {
    let mut args = vec!["install", "--host", host.name(), "--apply", "--json"];
    for m in modules {
        args.extend(["--module", m]);
    }
    let doc = sandbox.hpp_in(&sandbox.root, &args).json(0);
    if host == Host::ClaudeCode {
        std::fs::create_dir_all(sandbox.root.join(".claude")).expect("the sandbox is writable");
        std::fs::write(
            sandbox.root.join(".claude/settings.json"),
            serde_json::to_string_pretty(&doc["wiring"]).expect("the wiring serialises"),
        )
        .expect("the sandbox is writable");
    }
}

/// How one client run ended.
pub struct Session {
    /// The client's exit code (-1 when killed).
    pub code: i32,
    /// What it printed.
    pub run: Run,
    /// How long it took.
    pub took: Duration,
}

/// The longest any one client run may take before the test fails: a Stop gate that never
/// lets go shows here.
pub const BOUND: Duration = Duration::from_secs(90);

/// Runs `client` (of `host`) headless in `cwd` (a worktree of the sandbox's repository)
/// against `server`, with HOME in the sandbox, every proxy variable naming the server (which
/// refuses and logs a request for any other host), and telemetry, update checks, apps and
/// plugins off. Codex gets a `CODEX_HOME` whose config names the server as its provider and
/// trusts `cwd` when `trusted`. A run past [`BOUND`] is killed (exit -1).
pub fn run_client(
    sandbox: &Sandbox,
    host: Host,
    client: &Path,
    server: &ModelServer,
    cwd: &Path,
    trusted: bool,
) -> Session {
    run_client_with(
        sandbox,
        (host, client),
        server,
        cwd,
        trusted,
        ("do the scripted work", &[]),
    )
}

/// As [`run_client`], with `prompt` and `extra` arguments before it (Claude Code's
/// `--continue`, Codex's `-c key=value`).
pub fn run_client_with(
    sandbox: &Sandbox,
    (host, client): (Host, &Path),
    server: &ModelServer,
    cwd: &Path,
    trusted: bool,
    (prompt, extra): (&str, &[&str]),
) -> Session {
    let mut cmd = sandbox.command(&client.display().to_string(), cwd);
    let home = sandbox.path("home");
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
    ] {
        cmd.env(var, format!("http://127.0.0.1:{}", server.port));
    }
    cmd.env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost");
    match host {
        Host::ClaudeCode => {
            cmd.env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", server.port),
            )
            .env("ANTHROPIC_API_KEY", "test")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            // Every tool is allowed by the host's own rules, so the hooks alone decide
            // (`--dangerously-skip-permissions` is refused as root, as CI often runs).
            .args(extra)
            .args(["-p", prompt, "--output-format", "json"])
            .args(["--permission-mode", "acceptEdits"])
            .args(["--allowedTools", "Bash", "Write", "Edit"]);
        }
        Host::Codex => {
            let codex_home = home.join(".codex");
            std::fs::create_dir_all(&codex_home).expect("the sandbox is writable");
            let root = cwd.canonicalize().expect("the repository exists");
            let mut config = format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"local\"\n\
                 check_for_update_on_startup = false\n\n\
                 [analytics]\nenabled = false\n\n\
                 [features]\napps = false\nplugins = false\n\n\
                 [model_providers.local]\nname = \"local\"\n\
                 base_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\n\
                 env_key = \"LOCAL_MODEL_KEY\"\n",
                server.port
            );
            if trusted {
                config.push_str(&format!(
                    "\n[projects.{}]\ntrust_level = \"trusted\"\n",
                    Value::from(root.display().to_string())
                ));
            }
            std::fs::write(codex_home.join("config.toml"), config)
                .expect("the sandbox is writable");
            cmd.env("CODEX_HOME", &codex_home)
                .env("LOCAL_MODEL_KEY", "test")
                .args(["exec", "--skip-git-repo-check"])
                // The hooks were reviewed here (they are this repository's own); interactive
                // review is the only other way to trust them, and `exec` never offers it.
                .arg("--dangerously-bypass-hook-trust")
                // The host's own sandbox needs user namespaces CI may lack; the hooks decide.
                .args(["-s", "danger-full-access"])
                .args(extra)
                .arg(prompt);
        }
    }
    let out = sandbox.path(&format!("{}.stdout", host.bin()));
    let err = sandbox.path(&format!("{}.stderr", host.bin()));
    cmd.stdin(Stdio::null())
        .stdout(File::create(&out).expect("the sandbox is writable"))
        .stderr(File::create(&err).expect("the sandbox is writable"));
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{} starts: {e}", client.display()));
    let code = loop {
        if let Some(status) = child.try_wait().expect("the client can be waited on") {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let run = Run {
        code,
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    };
    Session { code, run, took }
}
