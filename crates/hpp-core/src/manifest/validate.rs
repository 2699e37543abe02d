//! The protocol's rules over the whole manifest: hosts, modules, hooks, bundles, exit codes,
//! routing tiers, maps, the installer and monitors.
//!
//! CONCEPTS.md "protocol", "module", "host", "hook capability" and "bundle": the invariants every
//! module and host must respect. [`validate`] applies the reference's rules in its order and
//! refuses on the first one broken, with the sentence the user reads; on success it returns the
//! typed declarations ([`Validated`]) that the doctor, `install` and `init` work from.
//!
//! [`super::Manifest::parse`] deliberately checks less (the protocol version and the loop): the
//! event commands need only the loop, and a repository whose module block is being edited must
//! still record events. `git hpp doctor` is where the whole contract is enforced.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::PROTOCOL_VERSION;

/// The exit policies a hook may declare.
pub const EXIT_POLICIES: [&str; 3] = ["observe", "warn", "block"];

/// The coverage a module may declare on a host.
pub const COVERAGES: [&str; 3] = ["native", "explicit-command", "unsupported"];

/// The routing tiers, in order.
pub const ROUTING_TIERS: [&str; 3] = ["economy", "balanced", "frontier"];

/// The exit codes, exactly.
pub const EXIT_CODES: [(&str, u64); 4] = [("ok", 0), ("warn", 1), ("block", 2), ("error", 3)];

/// The string fields every monitor declares.
const MONITOR_STRINGS: [&str; 6] = ["id", "target", "type", "severity", "cost", "consumer_gate"];

/// The integer fields every monitor declares.
const MONITOR_INTEGERS: [&str; 2] = ["cadence", "freshness"];

/// The rule a manifest breaks, as the sentence the user reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// The root is not a JSON object.
    #[error("the manifest must be a JSON object")]
    Root,
    /// `protocol_version` is not the one spoken here.
    #[error("protocol_version must be {PROTOCOL_VERSION}")]
    ProtocolVersion,
    /// A block that must be an object is missing or is something else.
    #[error("{field} must be a JSON object")]
    NotObject {
        /// The field, as a path (`bundles`, `modules[lane-kit].hosts`).
        field: String,
    },
    /// A list is missing, empty or not a list.
    #[error("{field} must be a non-empty list")]
    NotList {
        /// The field.
        field: String,
    },
    /// A list holds something other than non-empty strings.
    #[error("{field} must hold only non-empty strings")]
    NotStrings {
        /// The field.
        field: String,
    },
    /// A list or a set of ids holds one value twice.
    #[error("{field} has a duplicate entry: {value}")]
    Duplicate {
        /// The field.
        field: String,
        /// The repeated value.
        value: String,
    },
    /// A string field is missing or empty.
    #[error("{field} must be a non-empty string")]
    NotString {
        /// The field.
        field: String,
    },
    /// An integer field is missing, zero or negative.
    #[error("{field} must be a positive integer")]
    NotPositive {
        /// The field.
        field: String,
    },
    /// `exit_codes` is anything but the four fixed codes.
    #[error("exit_codes must be exactly {{\"ok\":0,\"warn\":1,\"block\":2,\"error\":3}}")]
    ExitCodes,
    /// `routing.tiers` is anything but the three tiers in order.
    #[error("routing.tiers must be exactly [\"economy\",\"balanced\",\"frontier\"]")]
    RoutingTiers,
    /// `installer` names neither a path nor a command.
    #[error("installer must name a non-empty path or command")]
    Installer,
    /// A path is absolute or climbs out with `..`.
    #[error("{field} must be a relative path inside the repository: {path}")]
    NotRelative {
        /// The field.
        field: String,
        /// The path as declared.
        path: String,
    },
    /// A module declares coverage on a host the manifest does not declare.
    #[error("module {module} declares an unknown host: {host}")]
    UnknownHost {
        /// The module.
        module: String,
        /// The host it names.
        host: String,
    },
    /// A module leaves a declared host without a known coverage.
    #[error(
        "module {module} must declare hosts.{host} as one of native, explicit-command, unsupported"
    )]
    Coverage {
        /// The module.
        module: String,
        /// The host.
        host: String,
    },
    /// A reference to a module that the manifest does not declare.
    #[error("{field} names an unknown module: {id}")]
    UnknownModule {
        /// Where the reference is.
        field: String,
        /// The id named.
        id: String,
    },
    /// `requires` loops back on itself.
    #[error("dependency cycle: {path}")]
    Cycle {
        /// The cycle, as `a -> b -> a`.
        path: String,
    },
    /// A hook declares no capabilities: none, an empty list, or one holding something other
    /// than non-empty strings (the reference's sentence; absent is never read as "does nothing").
    #[error("hook {hook} needs non-empty capabilities")]
    HookCapabilities {
        /// The hook.
        hook: String,
    },
    /// A hook names one capability twice (the reference's sentence).
    #[error("duplicate capability in {hook}: {capabilities}")]
    DuplicateCapability {
        /// The hook.
        hook: String,
        /// The repeated capabilities, sorted, joined by ", ".
        capabilities: String,
    },
    /// A hook declares a capability outside the vocabulary (the reference's sentence).
    #[error("hook {hook} declares unknown capability: {capability}")]
    UnknownCapability {
        /// The hook.
        hook: String,
        /// The unknown capabilities, sorted, joined by ", ".
        capability: String,
    },
    /// A hook's matcher names a host the manifest does not declare.
    #[error("{field} names an unknown host: {host}")]
    UnknownMatcherHost {
        /// The field (`hooks[<id>].matcher`).
        field: String,
        /// The host it names.
        host: String,
    },
    /// A hook's exit policy is not one of the three.
    #[error("hooks[{hook}].exit_policy must be one of observe, warn, block")]
    ExitPolicy {
        /// The hook.
        hook: String,
    },
    /// A module says it ships hooks but no hook declaration names it.
    #[error("module declares the hooks component and declares no hook: {module}")]
    NoHook {
        /// The module.
        module: String,
    },
    /// A bundle expects a capability that none of its modules provides.
    #[error(
        "bundles[{bundle}] expects capability {capability}, which none of its modules provides"
    )]
    BundleCapability {
        /// The bundle.
        bundle: String,
        /// The capability.
        capability: String,
    },
}

/// One module as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleDecl {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its directory, relative to the manifest.
    pub path: String,
    /// Its components (skills, hooks, agents, ...).
    pub components: Vec<String>,
    /// Its coverage per host.
    pub hosts: BTreeMap<String, String>,
    /// The capabilities it provides.
    pub capabilities: Vec<String>,
    /// The modules it requires.
    pub requires: Vec<String>,
    /// The modules it composes with.
    pub integrates_with: Vec<String>,
}

impl ModuleDecl {
    /// Returns the coverage declared on `host` (`unsupported` when the host is not declared).
    pub fn coverage(&self, host: &str) -> &str {
        self.hosts.get(host).map_or("unsupported", String::as_str)
    }

    /// Tells whether the module ships the component `name`.
    pub fn has_component(&self, name: &str) -> bool {
        self.components.iter().any(|c| c == name)
    }
}

/// One hook as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookDecl {
    /// Its id (`<module>/<name>`).
    pub id: String,
    /// The module that ships it.
    pub module: String,
    /// Its script, relative to the module's directory.
    pub script: String,
    /// The host events it runs on.
    pub events: Vec<String>,
    /// What it is able to do, from the vocabulary.
    pub capabilities: Vec<String>,
    /// `observe`, `warn` or `block`.
    pub exit_policy: String,
    /// The tool matcher of its tool events (PreToolUse, PostToolUse, ...) per host, when it
    /// declares one: `"matcher": "Bash"` applies to every host, `"matcher": {"claude-code":
    /// "Edit|Write", "codex": "apply_patch"}` to the hosts it names. A host without a matcher
    /// runs the hook on every tool.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub matcher: BTreeMap<String, String>,
}

impl HookDecl {
    /// Returns the tool matcher declared for `host`, if any.
    pub fn matcher_for(&self, host: &str) -> Option<&str> {
        self.matcher.get(host).map(String::as_str)
    }
}

/// One bundle as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BundleDecl {
    /// The modules it names.
    pub modules: Vec<String>,
    /// The capabilities it is expected to provide.
    pub capabilities: Vec<String>,
}

/// The hook census: how many hooks declare each capability group and each exit policy. Every
/// group of the vocabulary is present, so a zero is a measurement and not an omission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Census {
    /// How many hooks are declared.
    pub declared: usize,
    /// Hooks per capability group (every group of the vocabulary).
    pub by_capability: BTreeMap<String, usize>,
    /// Hooks per exit policy (all three).
    pub by_exit_policy: BTreeMap<String, usize>,
}

/// A manifest that passed every rule, as typed declarations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validated {
    /// The protocol version (always [`PROTOCOL_VERSION`]).
    pub protocol_version: String,
    /// The product version, when declared.
    pub product_version: Option<String>,
    /// The hosts, in manifest order.
    pub hosts: Vec<String>,
    /// The hook-capability vocabulary, in manifest order.
    pub vocabulary: Vec<String>,
    /// The modules, in manifest order.
    pub modules: Vec<ModuleDecl>,
    /// The hooks, in manifest order.
    pub hooks: Vec<HookDecl>,
    /// The bundles, by name.
    pub bundles: BTreeMap<String, BundleDecl>,
}

impl Validated {
    /// Returns the module `id`.
    pub fn module(&self, id: &str) -> Option<&ModuleDecl> {
        self.modules.iter().find(|m| m.id == id)
    }

    /// Returns the hooks the module `id` ships, in manifest order.
    pub fn hooks_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a HookDecl> + 'a {
        self.hooks.iter().filter(move |h| h.module == id)
    }

    /// Counts hooks per capability group and per exit policy.
    pub fn census(&self) -> Census {
        let mut by_capability: BTreeMap<String, usize> =
            self.vocabulary.iter().map(|g| (g.clone(), 0)).collect();
        let mut by_exit_policy: BTreeMap<String, usize> =
            EXIT_POLICIES.iter().map(|p| ((*p).to_owned(), 0)).collect();
        for hook in &self.hooks {
            for capability in &hook.capabilities {
                *by_capability.entry(capability.clone()).or_default() += 1;
            }
            *by_exit_policy.entry(hook.exit_policy.clone()).or_default() += 1;
        }
        Census {
            declared: self.hooks.len(),
            by_capability,
            by_exit_policy,
        }
    }
}

/// Applies every rule of the protocol to a manifest document and returns its declarations, or
/// the first rule it breaks.
///
/// ```
/// use hpp_core::manifest::{self, validate};
/// let value: serde_json::Value = serde_json::from_str(manifest::BUILT_IN).unwrap();
/// assert!(validate(&value).is_ok());
/// let mut bad = value.clone();
/// bad["exit_codes"]["warn"] = 4.into();
/// assert_eq!(validate(&bad).unwrap_err().to_string(),
///            r#"exit_codes must be exactly {"ok":0,"warn":1,"block":2,"error":3}"#);
/// ```
pub fn validate(value: &Value) -> Result<Validated, Invalid> {
    let root = value.as_object().ok_or(Invalid::Root)?;
    if root.get("protocol_version").and_then(Value::as_str) != Some(PROTOCOL_VERSION) {
        return Err(Invalid::ProtocolVersion);
    }
    let product_version = root
        .get("product_version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let hosts = strings(root.get("hosts"), "hosts", true)?;
    let vocabulary = strings(root.get("hook_capabilities"), "hook_capabilities", true)?;
    let modules = modules(root.get("modules"), &hosts)?;
    check_cycles(&modules)?;
    let hooks = hooks(root.get("hooks"), &modules, &vocabulary, &hosts)?;
    let bundles = bundles(root.get("bundles"), &modules)?;
    check_exit_codes(root.get("exit_codes"))?;
    check_routing(root.get("routing"))?;
    strings(root.get("maps"), "maps", true)?;
    check_installer(root.get("installer"))?;
    check_monitors(root.get("monitors"))?;
    Ok(Validated {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        product_version,
        hosts,
        vocabulary,
        modules,
        hooks,
        bundles,
    })
}

/// Tells whether `path` is relative and stays inside its root: not empty, not absolute, no
/// empty, `.` or `..` component, no backslash (so it means the same on every platform).
pub fn is_inside(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\\')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

fn strings(value: Option<&Value>, field: &str, non_empty: bool) -> Result<Vec<String>, Invalid> {
    let not_list = || Invalid::NotList {
        field: field.to_owned(),
    };
    let items = match value {
        Some(Value::Array(items)) => items,
        None if !non_empty => return Ok(Vec::new()),
        _ => return Err(not_list()),
    };
    if non_empty && items.is_empty() {
        return Err(not_list());
    }
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let text = item
            .as_str()
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| Invalid::NotStrings {
                field: field.to_owned(),
            })?;
        if out.iter().any(|seen| seen == text) {
            return Err(Invalid::Duplicate {
                field: field.to_owned(),
                value: text.to_owned(),
            });
        }
        out.push(text.to_owned());
    }
    Ok(out)
}

/// A hook's `capabilities`, checked as the reference checks them and refused in its words: a
/// non-empty list of non-empty strings, none twice, each in the vocabulary.
fn hook_capabilities(
    value: Option<&Value>,
    hook: &str,
    vocabulary: &[String],
) -> Result<Vec<String>, Invalid> {
    let listed: Option<Vec<String>> = match value {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|item| item.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
            .collect(),
        _ => None,
    };
    let capabilities = listed.ok_or_else(|| Invalid::HookCapabilities {
        hook: hook.to_owned(),
    })?;
    let sorted_unique = |found: Vec<&String>| {
        let set: std::collections::BTreeSet<&String> = found.into_iter().collect();
        set.into_iter().cloned().collect::<Vec<_>>().join(", ")
    };
    let twice: Vec<&String> = capabilities
        .iter()
        .filter(|c| capabilities.iter().filter(|d| d == c).count() > 1)
        .collect();
    if !twice.is_empty() {
        return Err(Invalid::DuplicateCapability {
            hook: hook.to_owned(),
            capabilities: sorted_unique(twice),
        });
    }
    let unknown: Vec<&String> = capabilities
        .iter()
        .filter(|c| !vocabulary.contains(c))
        .collect();
    if !unknown.is_empty() {
        return Err(Invalid::UnknownCapability {
            hook: hook.to_owned(),
            capability: sorted_unique(unknown),
        });
    }
    Ok(capabilities)
}

fn string(map: &Map<String, Value>, key: &str, field: &str) -> Result<String, Invalid> {
    map.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
        .ok_or_else(|| Invalid::NotString {
            field: format!("{field}.{key}"),
        })
}

fn object<'a>(value: Option<&'a Value>, field: &str) -> Result<&'a Map<String, Value>, Invalid> {
    value
        .and_then(Value::as_object)
        .ok_or_else(|| Invalid::NotObject {
            field: field.to_owned(),
        })
}

fn list<'a>(value: Option<&'a Value>, field: &str) -> Result<&'a Vec<Value>, Invalid> {
    match value {
        Some(Value::Array(items)) if !items.is_empty() => Ok(items),
        _ => Err(Invalid::NotList {
            field: field.to_owned(),
        }),
    }
}

fn modules(value: Option<&Value>, hosts: &[String]) -> Result<Vec<ModuleDecl>, Invalid> {
    let items = list(value, "modules")?;
    let mut out: Vec<ModuleDecl> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let map = object(Some(item), &format!("modules[{index}]"))?;
        let id = string(map, "id", &format!("modules[{index}]"))?;
        if out.iter().any(|m| m.id == id) {
            return Err(Invalid::Duplicate {
                field: "modules".into(),
                value: id,
            });
        }
        let at = format!("modules[{id}]");
        let version = string(map, "version", &at)?;
        let path = string(map, "path", &at)?;
        if !is_inside(&path) {
            return Err(Invalid::NotRelative {
                field: format!("{at}.path"),
                path,
            });
        }
        if out
            .iter()
            .any(|m| m.path.trim_end_matches('/') == path.trim_end_matches('/'))
        {
            return Err(Invalid::Duplicate {
                field: "modules[].path".into(),
                value: path,
            });
        }
        let capabilities = strings(map.get("capabilities"), &format!("{at}.capabilities"), true)?;
        let components = strings(map.get("components"), &format!("{at}.components"), false)?;
        let requires = strings(map.get("requires"), &format!("{at}.requires"), false)?;
        let integrates_with = strings(
            map.get("integrates_with"),
            &format!("{at}.integrates_with"),
            false,
        )?;
        let declared = object(map.get("hosts"), &format!("{at}.hosts"))?;
        for host in declared.keys() {
            if !hosts.contains(host) {
                return Err(Invalid::UnknownHost {
                    module: id,
                    host: host.clone(),
                });
            }
        }
        let mut coverage = BTreeMap::new();
        for host in hosts {
            match declared.get(host).and_then(Value::as_str) {
                Some(c) if COVERAGES.contains(&c) => {
                    coverage.insert(host.clone(), c.to_owned());
                }
                _ => {
                    return Err(Invalid::Coverage {
                        module: id,
                        host: host.clone(),
                    });
                }
            }
        }
        out.push(ModuleDecl {
            id,
            version,
            path,
            components,
            hosts: coverage,
            capabilities,
            requires,
            integrates_with,
        });
    }
    let known: BTreeSet<&str> = out.iter().map(|m| m.id.as_str()).collect();
    for module in &out {
        for (field, ids) in [
            ("requires", &module.requires),
            ("integrates_with", &module.integrates_with),
        ] {
            if let Some(id) = ids.iter().find(|id| !known.contains(id.as_str())) {
                return Err(Invalid::UnknownModule {
                    field: format!("modules[{}].{field}", module.id),
                    id: id.clone(),
                });
            }
        }
    }
    Ok(out)
}

fn check_cycles(modules: &[ModuleDecl]) -> Result<(), Invalid> {
    fn visit<'a>(
        id: &'a str,
        modules: &'a [ModuleDecl],
        stack: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Result<(), Invalid> {
        if let Some(start) = stack.iter().position(|s| *s == id) {
            let mut path: Vec<&str> = stack[start..].to_vec();
            path.push(id);
            return Err(Invalid::Cycle {
                path: path.join(" -> "),
            });
        }
        if done.contains(id) {
            return Ok(());
        }
        stack.push(id);
        if let Some(module) = modules.iter().find(|m| m.id == id) {
            for next in &module.requires {
                visit(next, modules, stack, done)?;
            }
        }
        stack.pop();
        done.insert(id);
        Ok(())
    }
    let mut done = BTreeSet::new();
    for module in modules {
        visit(&module.id, modules, &mut Vec::new(), &mut done)?;
    }
    Ok(())
}

fn hooks(
    value: Option<&Value>,
    modules: &[ModuleDecl],
    vocabulary: &[String],
    hosts: &[String],
) -> Result<Vec<HookDecl>, Invalid> {
    let items = list(value, "hooks")?;
    let mut out: Vec<HookDecl> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let map = object(Some(item), &format!("hooks[{index}]"))?;
        let id = string(map, "id", &format!("hooks[{index}]"))?;
        if out.iter().any(|h| h.id == id) {
            return Err(Invalid::Duplicate {
                field: "hooks".into(),
                value: id,
            });
        }
        let at = format!("hooks[{id}]");
        let module = string(map, "module", &at)?;
        if !modules.iter().any(|m| m.id == module) {
            return Err(Invalid::UnknownModule {
                field: format!("{at}.module"),
                id: module,
            });
        }
        let script = string(map, "script", &at)?;
        if !is_inside(&script) {
            return Err(Invalid::NotRelative {
                field: format!("{at}.script"),
                path: script,
            });
        }
        let events = strings(map.get("events"), &format!("{at}.events"), true)?;
        let capabilities = hook_capabilities(map.get("capabilities"), &id, vocabulary)?;
        let exit_policy = match map.get("exit_policy").and_then(Value::as_str) {
            Some(p) if EXIT_POLICIES.contains(&p) => p.to_owned(),
            _ => return Err(Invalid::ExitPolicy { hook: id }),
        };
        let matcher = matcher(map.get("matcher"), &at, hosts)?;
        out.push(HookDecl {
            id,
            module,
            script,
            events,
            capabilities,
            exit_policy,
            matcher,
        });
    }
    if let Some(module) = modules
        .iter()
        .find(|m| m.has_component("hooks") && !out.iter().any(|h| h.module == m.id))
    {
        return Err(Invalid::NoHook {
            module: module.id.clone(),
        });
    }
    Ok(out)
}

/// Reads a hook's optional `matcher`: absent, a non-empty string (every host), or an object
/// from declared hosts to non-empty strings.
fn matcher(
    value: Option<&Value>,
    at: &str,
    hosts: &[String],
) -> Result<BTreeMap<String, String>, Invalid> {
    let field = format!("{at}.matcher");
    let non_empty = |v: &Value| {
        v.as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    match value {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) if !map.is_empty() => {
            let mut out = BTreeMap::new();
            for (host, matcher) in map {
                if !hosts.contains(host) {
                    return Err(Invalid::UnknownMatcherHost {
                        field,
                        host: host.clone(),
                    });
                }
                let matcher = non_empty(matcher).ok_or_else(|| Invalid::NotString {
                    field: format!("{field}.{host}"),
                })?;
                out.insert(host.clone(), matcher);
            }
            Ok(out)
        }
        Some(v) => {
            let matcher = non_empty(v).ok_or(Invalid::NotString { field })?;
            Ok(hosts.iter().map(|h| (h.clone(), matcher.clone())).collect())
        }
    }
}

fn bundles(
    value: Option<&Value>,
    modules: &[ModuleDecl],
) -> Result<BTreeMap<String, BundleDecl>, Invalid> {
    let map = object(value, "bundles")?;
    if map.is_empty() {
        return Err(Invalid::NotObject {
            field: "bundles".into(),
        });
    }
    let mut out = BTreeMap::new();
    for (name, bundle) in map {
        let at = format!("bundles[{name}]");
        let bundle = object(Some(bundle), &at)?;
        let members = strings(bundle.get("modules"), &format!("{at}.modules"), true)?;
        if let Some(id) = members
            .iter()
            .find(|id| !modules.iter().any(|m| &m.id == *id))
        {
            return Err(Invalid::UnknownModule {
                field: format!("{at}.modules"),
                id: id.clone(),
            });
        }
        let capabilities = strings(
            bundle.get("capabilities"),
            &format!("{at}.capabilities"),
            true,
        )?;
        for capability in &capabilities {
            let provided = modules
                .iter()
                .filter(|m| members.contains(&m.id))
                .any(|m| m.capabilities.contains(capability));
            if !provided {
                return Err(Invalid::BundleCapability {
                    bundle: name.clone(),
                    capability: capability.clone(),
                });
            }
        }
        out.insert(
            name.clone(),
            BundleDecl {
                modules: members,
                capabilities,
            },
        );
    }
    Ok(out)
}

fn check_exit_codes(value: Option<&Value>) -> Result<(), Invalid> {
    let map = value.and_then(Value::as_object).ok_or(Invalid::ExitCodes)?;
    let exact = map.len() == EXIT_CODES.len()
        && EXIT_CODES.iter().all(|(k, v)| {
            map.get(*k).and_then(Value::as_u64) == Some(*v)
                && map.get(*k).is_some_and(|n| n.is_u64())
        });
    if exact {
        Ok(())
    } else {
        Err(Invalid::ExitCodes)
    }
}

fn check_routing(value: Option<&Value>) -> Result<(), Invalid> {
    let routing = object(value, "routing")?;
    let tiers: Option<Vec<&str>> = routing
        .get("tiers")
        .and_then(Value::as_array)
        .and_then(|t| t.iter().map(Value::as_str).collect());
    if tiers.as_deref() == Some(&ROUTING_TIERS[..]) {
        Ok(())
    } else {
        Err(Invalid::RoutingTiers)
    }
}

fn check_installer(value: Option<&Value>) -> Result<(), Invalid> {
    // The reference names a script path; ours names a command (`git hpp install`). Either is a
    // declaration of how modules get installed; neither may be empty.
    let installer = object(value, "installer")?;
    let named = ["path", "command"].iter().any(|k| {
        installer
            .get(*k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    });
    if named {
        Ok(())
    } else {
        Err(Invalid::Installer)
    }
}

fn check_monitors(value: Option<&Value>) -> Result<(), Invalid> {
    let items = list(value, "monitors")?;
    let mut seen = BTreeSet::new();
    for (index, item) in items.iter().enumerate() {
        let map = object(Some(item), &format!("monitors[{index}]"))?;
        let id = string(map, "id", &format!("monitors[{index}]"))?;
        let at = format!("monitors[{id}]");
        for key in MONITOR_STRINGS {
            string(map, key, &at)?;
        }
        for key in MONITOR_INTEGERS {
            if !matches!(map.get(key).and_then(Value::as_u64), Some(n) if n > 0) {
                return Err(Invalid::NotPositive {
                    field: format!("{at}.{key}"),
                });
            }
        }
        if !seen.insert(id.clone()) {
            return Err(Invalid::Duplicate {
                field: "monitors".into(),
                value: id,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in() -> Value {
        serde_json::from_str(crate::manifest::BUILT_IN).expect("the built-in manifest parses")
    }

    fn hook<'a>(v: &'a Validated, id: &str) -> &'a HookDecl {
        v.hooks.iter().find(|h| h.id == id).expect("declared")
    }

    #[test]
    fn a_matcher_is_per_host_or_the_same_for_every_host() {
        let v = validate(&built_in()).expect("valid");
        let policy = hook(&v, "operator-kit/policy-gate");
        assert_eq!(policy.matcher_for("claude-code"), Some("Bash"));
        assert_eq!(policy.matcher_for("codex"), Some("Bash"));
        let guard = hook(&v, "lane-kit/territory-guard");
        assert_eq!(
            guard.matcher_for("claude-code"),
            Some("Edit|Write|NotebookEdit")
        );
        assert_eq!(guard.matcher_for("codex"), Some("apply_patch"));
        assert_eq!(
            hook(&v, "operator-kit/loop-gate").matcher_for("codex"),
            None
        );
    }

    #[test]
    fn control_an_empty_or_misaddressed_matcher_is_refused() {
        let cases: [(Value, &str); 5] = [
            (
                Value::from(""),
                "hooks[operator-kit/policy-gate].matcher must be a non-empty string",
            ),
            (
                Value::from(3),
                "hooks[operator-kit/policy-gate].matcher must be a non-empty string",
            ),
            (
                serde_json::json!({}),
                "hooks[operator-kit/policy-gate].matcher must be a non-empty string",
            ),
            (
                serde_json::json!({"codex": " "}),
                "hooks[operator-kit/policy-gate].matcher.codex must be a non-empty string",
            ),
            (
                serde_json::json!({"vim": "Bash"}),
                "hooks[operator-kit/policy-gate].matcher names an unknown host: vim",
            ),
        ];
        for (matcher, expected) in cases {
            let mut value = built_in();
            value["hooks"][0]["matcher"] = matcher;
            assert_eq!(validate(&value).expect_err(expected).to_string(), expected);
        }
    }
}
