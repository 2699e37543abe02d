//! The maintained rule set: the built-in rules of `nosecrets-rules` (pinned in `Cargo.toml`),
//! compiled once per process and read after ours ([`super::SHAPES`]).
//!
//! A text is read once by a keyword automaton (every rule's keywords, ASCII case-insensitive);
//! only the rules one of whose keywords it holds are then matched, and a rule without keywords
//! always is. A match counts when its secret (the rule's capture group) passes the rule's own
//! checks, as the rule set defines them:
//!
//! - `validate`: one of its prefixes, only characters of its charset, its length bounds;
//! - `allow`: none of its patterns matches the secret, and it is none of its values;
//! - `paths`: the file is not excluded (and is included, where the rule names what it includes);
//!
//! and ours, which keep example and placeholder values out ([`placeholder`]): an example key
//! (`AKIAIOSFODNN7EXAMPLE`), a template expression (`${TOKEN}`, `{{ .Token }}`, `<token>`),
//! filler (`xxxx`, `****`); and, for the generic rules (a secret with no vendor prefix of its
//! own: an assignment to a key named like a credential, a password in a connection URL), a value
//! that reads like an identifier or a word rather than a random string ([`looks_random`]): a
//! fixture's `postgres://postgres:postgres@db` is no secret, as ours already held. Rules of `low` severity do not
//! block, as in the rule set's own scanner.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use globset::{Glob, GlobSet, GlobSetBuilder};
use nosecrets_rules::{Rule, Severity};
use regex::bytes::{Regex, RegexBuilder};

/// A pattern compiled the first time a text needs it: most texts hold none of a rule's
/// keywords, so most processes compile none of the rules (all 50 took milliseconds, on every
/// `event append`).
struct Lazy {
    source: String,
    built: OnceLock<Regex>,
}

impl Lazy {
    fn new(source: String) -> Self {
        Self {
            source,
            built: OnceLock::new(),
        }
    }

    fn get(&self) -> &Regex {
        self.built.get_or_init(|| compile(&self.source))
    }
}

/// One rule, compiled as it is needed.
struct Compiled {
    /// What a refusal names: the rule's own name and id.
    name: String,
    pattern: Lazy,
    capture: usize,
    prefixes: Vec<String>,
    charset: Option<Lazy>,
    length: Option<usize>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    allow: Vec<Lazy>,
    allow_values: Vec<String>,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    /// A rule the rule set ranks `medium` (a credential-named assignment): its value must look
    /// random. So must the value of a rule with no vendor prefix that is part of its match.
    generic: bool,
}

/// Every blocking rule, and the automaton over their keywords.
pub(super) struct RuleSet {
    rules: Vec<Compiled>,
    keywords: AhoCorasick,
    /// For each keyword of [`RuleSet::keywords`], the rule it belongs to.
    owner: Vec<usize>,
    /// The rules with no keywords: matched on every text.
    unkeyed: Vec<usize>,
}

/// The rule set, compiled on first use.
pub(super) static RULES: LazyLock<RuleSet> = LazyLock::new(|| {
    let rules = nosecrets_rules::load_builtin_rules()
        .expect("the pinned rule set's built-in rules parse (a test reads them)");
    RuleSet::new(&rules)
});

/// Builds a regex the rule set's way: ASCII classes (`\w`, `\d`, `\s`, `\b`), as the Go engine
/// the rules are written for has them; Unicode classes would cost 50 times the compile time.
fn compile(pattern: &str) -> Regex {
    RegexBuilder::new(pattern)
        .unicode(false)
        .build()
        .unwrap_or_else(|e| panic!("the pinned rule set's pattern {pattern:?} compiles: {e}"))
}

/// A glob set from a rule's path globs: `dir/` names a directory anywhere, a bare name or
/// `*.ext` a file name anywhere.
fn globs(patterns: &[String]) -> Option<GlobSet> {
    if patterns.is_empty() {
        return None;
    }
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let pattern = match pattern.strip_suffix('/') {
            Some(dir) => format!("**/{dir}/**"),
            None if pattern.contains('/') => pattern.clone(),
            None => format!("**/{pattern}"),
        };
        let glob = Glob::new(&pattern)
            .unwrap_or_else(|e| panic!("the pinned rule set's path {pattern:?} is a glob: {e}"));
        set.add(glob);
    }
    Some(set.build().expect("the rule set's path globs build"))
}

impl RuleSet {
    fn new(rules: &[Rule]) -> Self {
        let mut compiled = Vec::new();
        let mut words = Vec::new();
        let mut owner = Vec::new();
        let mut unkeyed = Vec::new();
        for rule in rules.iter().filter(|r| r.severity.blocks()) {
            let index = compiled.len();
            if rule.keywords.is_empty() {
                unkeyed.push(index);
            }
            for word in &rule.keywords {
                words.push(word.as_str());
                owner.push(index);
            }
            let validate = rule.validate.clone().unwrap_or_default();
            let allow = rule.allow.clone().unwrap_or_default();
            let paths = rule.paths.clone().unwrap_or_default();
            compiled.push(Compiled {
                name: format!("{} {} (rule {})", article(&rule.name), rule.name, rule.id),
                pattern: Lazy::new(rule.pattern.clone()),
                capture: rule.capture,
                prefixes: validate.prefix,
                // Checked with the pattern's own case rule: `(?i)` makes `a-z` any case there.
                charset: validate.charset.map(|c| {
                    let flags = if rule.pattern.starts_with("(?i)") {
                        "(?i)"
                    } else {
                        ""
                    };
                    Lazy::new(format!("{flags}^[{c}]*$"))
                }),
                length: validate.length,
                min_length: validate.min_length,
                max_length: validate.max_length,
                allow: allow.patterns.iter().cloned().map(Lazy::new).collect(),
                allow_values: allow.values,
                include: globs(&paths.include),
                exclude: globs(&paths.exclude),
                generic: rule.severity == Severity::Medium,
            });
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .expect("the rule set's keywords build an automaton");
        Self {
            rules: compiled,
            keywords,
            owner,
            unkeyed,
        }
    }

    /// How many rules block.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.rules.len()
    }

    /// Compiles every pattern now (a test's proof that each one compiles), returning how many.
    #[cfg(test)]
    fn compile_all(&self) -> usize {
        self.rules
            .iter()
            .map(|r| {
                r.pattern.get();
                r.charset.as_ref().map(Lazy::get);
                r.allow.iter().map(Lazy::get).count() + 1
            })
            .sum()
    }

    /// Names the first rule, in the rule set's order, that finds a secret in `text` (a file at
    /// `path` where it is known: a rule's paths are then honoured).
    pub(super) fn find(&self, text: &[u8], path: Option<&str>) -> Option<&str> {
        let mut candidate = vec![false; self.rules.len()];
        for i in &self.unkeyed {
            candidate[*i] = true;
        }
        for hit in self.keywords.find_overlapping_iter(text) {
            candidate[self.owner[hit.pattern().as_usize()]] = true;
        }
        self.rules
            .iter()
            .zip(candidate)
            .filter(|(rule, candidate)| *candidate && rule.applies_to(path))
            .find(|(rule, _)| rule.finds(text))
            .map(|(rule, _)| rule.name.as_str())
    }
}

impl Compiled {
    fn applies_to(&self, path: Option<&str>) -> bool {
        let Some(path) = path else { return true };
        let included = self.include.as_ref().is_none_or(|set| set.is_match(path));
        let excluded = self.exclude.as_ref().is_some_and(|set| set.is_match(path));
        included && !excluded
    }

    fn finds(&self, text: &[u8]) -> bool {
        self.pattern.get().captures_iter(text).any(|caps| {
            let secret = caps
                .get(self.capture)
                .or_else(|| caps.get(0))
                .map_or(&[][..], |m| m.as_bytes());
            // A secret that is part of what the rule matched (a password in a URL, a value
            // after its key) has no shape of its own; one that is the whole match has.
            let whole = caps.get(0).map_or(0, |m| m.len());
            self.accepts(
                secret,
                self.generic || (self.prefixes.is_empty() && secret.len() < whole),
            )
        })
    }

    /// Whether `secret` passes the rule's checks and ours; a `generic` one must look random.
    fn accepts(&self, secret: &[u8], generic: bool) -> bool {
        let Ok(secret) = std::str::from_utf8(secret) else {
            return false;
        };
        let len = secret.len();
        let valid = (self.prefixes.is_empty()
            || self.prefixes.iter().any(|p| secret.starts_with(p)))
            && self
                .charset
                .as_ref()
                .is_none_or(|c| c.get().is_match(secret.as_bytes()))
            && self.length.is_none_or(|n| len == n)
            && self.min_length.is_none_or(|n| len >= n)
            && self.max_length.is_none_or(|n| len <= n);
        let allowed = self
            .allow
            .iter()
            .any(|p| p.get().is_match(secret.as_bytes()))
            || self.allow_values.iter().any(|v| v == secret);
        valid && !allowed && !placeholder(secret) && (!generic || looks_random(secret))
    }
}

/// "a" or "an" before a rule's name ("an AWS Access Key ID", "a GitHub Personal Access Token").
fn article(name: &str) -> &'static str {
    match name.chars().next() {
        Some('A' | 'E' | 'I' | 'O' | 'U' | 'a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// Whether a matched value is an example or a placeholder, never a secret: it says "example"
/// (the AWS documentation's `AKIAIOSFODNN7EXAMPLE`), it is a template expression (`${TOKEN}`,
/// `$TOKEN`, `{{ .Token }}`, `<token>`, `%(token)s`), or filler (`xxxx`, `****`, `....`, one
/// character repeated).
///
/// ```
/// use hpp_core::secrets::placeholder;
/// assert!(placeholder("AKIAIOSFODNN7EXAMPLE"));
/// assert!(placeholder("${NPM_TOKEN}"));
/// assert!(placeholder("<your-api-key>"));
/// assert!(!placeholder("npm_4f9Qz0pL2mX8rT6vB1nK7cW3yH5dJ0aS9eG2"));
/// ```
pub fn placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let template = ["${", "{{", "<", "%(", "$("]
        .iter()
        .any(|open| lower.starts_with(open))
        || lower
            .strip_prefix('$')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
    let filler = [
        "xxxx", "****", "....", "example", "your_", "your-", "changeme",
    ]
    .iter()
    .any(|word| lower.contains(word));
    let repeated = value
        .chars()
        .next()
        .is_some_and(|first| value.chars().all(|c| c == first));
    template || filler || repeated
}

/// Whether a generic rule's value reads like a random string, not a word or an identifier
/// (`load_api_key_from_environment`): letters and digits both, and a Shannon entropy above
/// 3.5 bits a character (gitleaks' threshold for its generic rule).
///
/// ```
/// use hpp_core::secrets::looks_random;
/// assert!(looks_random("q8ZfT2rLw9XkP4mN7vB3"));
/// assert!(!looks_random("load_api_key_from_environment"));
/// ```
pub fn looks_random(value: &str) -> bool {
    let letters = value.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = value.bytes().any(|b| b.is_ascii_digit());
    letters && digits && entropy(value) > 3.5
}

/// Shannon entropy of `value`'s bytes, in bits a byte.
fn entropy(value: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = value.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Up to `n` texts each rule's own pattern matches, generated from it (ASCII, as the rule
    /// set's engine reads it), each after the rule's first keyword so the prefilter lets it in.
    fn generated(rule: &Rule, n: usize, seed: u64) -> Vec<String> {
        use rand::{RngExt as _, SeedableRng as _};
        let hir = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .utf8(false)
            .build()
            .parse(&rule.pattern)
            .expect("the rule's pattern parses");
        let pattern = rand_regex::Regex::with_hir(without_looks(hir), 40)
            .expect("the rule's pattern generates");
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let keyword = rule.keywords.first().map_or("", String::as_str);
        (0..n * 4)
            // Bytes past ASCII (what `.` and `[^...]` may give) become a letter or digit, which
            // those allow too.
            .map(|_| {
                const ALNUM: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
                let bytes: Vec<u8> = rng.sample(&pattern);
                let ascii = |b: u8| {
                    if b.is_ascii() {
                        b
                    } else {
                        ALNUM[usize::from(b) % ALNUM.len()]
                    }
                };
                bytes
                    .into_iter()
                    .map(|b| char::from(ascii(b)))
                    .collect::<String>()
            })
            .take(n)
            .map(|sample| format!("{keyword} {sample}\n"))
            .collect()
    }

    /// `hir` without its look-around assertions (`\b`, `^`, `$`), which a generator cannot
    /// produce: what is left generates texts the whole pattern matches once set apart by spaces.
    fn without_looks(hir: regex_syntax::hir::Hir) -> regex_syntax::hir::Hir {
        use regex_syntax::hir::{Hir, HirKind};
        match hir.into_kind() {
            HirKind::Look(_) => Hir::empty(),
            HirKind::Concat(all) => Hir::concat(all.into_iter().map(without_looks).collect()),
            HirKind::Alternation(all) => {
                Hir::alternation(all.into_iter().map(without_looks).collect())
            }
            HirKind::Repetition(mut rep) => {
                rep.sub = Box::new(without_looks(*rep.sub));
                Hir::repetition(rep)
            }
            HirKind::Capture(mut cap) => {
                cap.sub = Box::new(without_looks(*cap.sub));
                Hir::capture(cap)
            }
            HirKind::Empty => Hir::empty(),
            HirKind::Literal(lit) => Hir::literal(lit.0),
            HirKind::Class(class) => Hir::class(class),
        }
    }

    #[test]
    fn every_rule_of_the_pinned_set_compiles_and_the_blocking_ones_are_read() {
        let rules = nosecrets_rules::load_builtin_rules().expect("the rules parse");
        let blocking = rules.iter().filter(|r| r.severity.blocks()).count();
        assert!(
            blocking >= 45,
            "the pinned set has {blocking} blocking rules"
        );
        assert_eq!(RULES.len(), blocking);
        assert!(RULES.compile_all() >= blocking);
    }

    /// The rule set ships no examples of its own; each rule's pattern generates them. Every
    /// rule finds most of what it describes; the few lost are values our filters take for
    /// examples or placeholders (a generated `xxxx`, a generic value with no digit).
    #[test]
    fn every_rule_finds_the_secrets_its_own_pattern_describes() {
        let rules = nosecrets_rules::load_builtin_rules().expect("the rules parse");
        let mut total = 0;
        let mut found = 0;
        let mut silent = Vec::new();
        for (i, rule) in rules.iter().filter(|r| r.severity.blocks()).enumerate() {
            let samples = generated(rule, 20, i as u64);
            let hits = samples
                .iter()
                .filter(|s| RULES.find(s.as_bytes(), None).is_some())
                .count();
            total += samples.len();
            found += hits;
            if hits == 0 {
                silent.push(rule.id.clone());
            }
        }
        assert!(
            silent.is_empty(),
            "rules that found none of their own: {silent:?}"
        );
        assert!(
            found * 10 >= total * 9,
            "{found} of {total} generated secrets found"
        );
    }

    #[test]
    fn control_the_same_samples_with_the_rule_set_emptied_are_not_found() {
        let rules = nosecrets_rules::load_builtin_rules().expect("the rules parse");
        let empty = RuleSet::new(&[]);
        let rule = rules
            .iter()
            .find(|r| r.id == "github-pat")
            .expect("the rule exists");
        for sample in generated(rule, 5, 7) {
            assert!(RULES.find(sample.as_bytes(), None).is_some(), "{sample}");
            assert_eq!(empty.find(sample.as_bytes(), None), None, "{sample}");
        }
    }

    #[test]
    fn a_rule_honours_the_paths_it_skips() {
        let key = b"-----BEGIN RSA PRIVATE KEY-----\n";
        let empty = RuleSet::new(&[]);
        assert_eq!(empty.find(key, Some("id_rsa")), None);
        let found = RULES
            .find(key, Some("deploy/id_rsa"))
            .expect("a key in a file");
        assert!(found.contains("private-key"), "{found}");
        assert_eq!(RULES.find(key, Some("deploy/id_rsa.pub")), None);
    }

    #[test]
    fn examples_and_placeholders_are_no_secrets() {
        for value in [
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "${NPM_TOKEN}",
            "$GITHUB_TOKEN",
            "{{ .Values.token }}",
            "<your-api-key>",
            "%(password)s",
            "xxxxxxxxxxxxxxxxxxxx",
            "********",
            "your_api_key_here",
        ] {
            assert!(placeholder(value), "{value}");
        }
        assert!(!placeholder("q8ZfT2rLw9XkP4mN7vB3"));
    }

    #[test]
    fn control_identifiers_are_not_random_but_keys_are() {
        assert!(!looks_random("compute_the_secret_value_here"));
        assert!(!looks_random("AAAAAAAAAAAAAAAAAAAA1"));
        assert!(looks_random("Zq3v9Lk2Xw8Rt5Pm1Nb7"));
    }
}
