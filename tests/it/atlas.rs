//! `git hpp atlas --html OUT.html`: one self-contained page, each view labelled with its command
//! and source hash, the same bytes for the same `--now`, and no file replaced without --force.

use hpp_core::record::sha256_hex;

use crate::harness::Sandbox;

/// A repository with a loop, an evidence bundle and an attestation.
fn demo() -> Sandbox {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nThe tool greets.\n")
        .expect("the sandbox is writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--loop",
            "feature-a",
            "--work",
            "ITEM-1",
            "--maker",
            "agent-a",
        ])
        .ok();
    sandbox
        .hpp(["evidence", "run", "--id", "unit-tests", "--", "true"])
        .ok();
    let args = crate::harness::attest_args("review:001", "approved");
    sandbox.hpp_in(&sandbox.root, &args).ok();
    sandbox
}

fn atlas(sandbox: &Sandbox, out: &str, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["atlas", "--html", out, "--now", "1764700000", "--json"];
    args.extend(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

#[test]
fn the_page_labels_every_view_with_its_command_and_source_hash() {
    let sandbox = demo();
    let out = sandbox.path("atlas.html");
    let summary = atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("the page was written");
    assert_eq!(summary["sha256"], sha256_hex(page.as_bytes()));
    let sections = summary["sections"].as_array().expect("a list");
    let ids: Vec<&str> = sections
        .iter()
        .map(|s| s["id"].as_str().expect("id"))
        .collect();
    for id in [
        "graph-capability",
        "graph-operational",
        "graph-agent",
        "graph-evidence",
        "graph-code",
        "map-lane",
        "map-monitor",
        "loops",
        "evidence",
        "attestations",
        "board",
        "sessions",
        "hop",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    for s in sections {
        let command = s["command"].as_str().expect("command");
        let hash = s["source_sha256"].as_str().expect("hash");
        assert_eq!(hash.len(), 64);
        assert!(
            page.contains(&format!("<code>{command}</code>")),
            "{command}"
        );
        assert!(page.contains(&format!("<code>{hash}</code>")), "{hash}");
    }
    assert!(page.contains("<code>git hpp map lane --now 1764700000</code>"));
    assert!(page.contains("<svg"));
    assert!(page.contains("feature-a"));
    // Per loop: how each gate stands, and the command that passes the next one.
    assert!(
        page.contains("scope: holds; fresh-evidence: not yet"),
        "the loop's gates"
    );
    assert!(
        page.contains("git hpp evidence run --loop feature-a"),
        "the loop's next action"
    );
    assert!(page.contains("unit-tests"));
    assert!(page.contains("checker-b"));
}

#[test]
fn the_page_is_self_contained_and_the_same_bytes_for_the_same_now() {
    let sandbox = demo();
    let first = sandbox.path("one.html");
    let second = sandbox.path("two.html");
    atlas(&sandbox, first.to_str().expect("utf-8"), &[]).json(0);
    atlas(&sandbox, second.to_str().expect("utf-8"), &[]).json(0);
    let a = std::fs::read(&first).expect("written");
    let b = std::fs::read(&second).expect("written");
    assert_eq!(sha256_hex(&a), sha256_hex(&b));
    let page = String::from_utf8(a).expect("UTF-8");
    for banned in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "@import",
    ] {
        assert!(!page.contains(banned), "the page holds {banned}");
    }
    assert!(!page.contains("src="), "the page loads nothing");
    for href in page.split("href=\"").skip(1) {
        assert!(href.starts_with('#'), "only in-page links: {href:.40}");
    }
}

#[test]
fn control_an_existing_file_is_not_replaced_without_force() {
    let sandbox = demo();
    let out = sandbox.path("atlas.html");
    std::fs::write(&out, "keep me").expect("writable");
    let path = out.to_str().expect("utf-8");
    let reason = atlas(&sandbox, path, &[]).refused();
    assert!(reason.ends_with("exists; not replacing it"), "{reason}");
    assert_eq!(std::fs::read_to_string(&out).expect("kept"), "keep me");
    atlas(&sandbox, path, &["--force"]).json(0);
    assert!(
        std::fs::read_to_string(&out)
            .expect("replaced")
            .starts_with("<!DOCTYPE html>")
    );
}

#[test]
fn the_atlas_writes_no_ref_and_needs_a_repository() {
    let sandbox = demo();
    let before = sandbox.hpp_refs();
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    assert_eq!(sandbox.hpp_refs(), before);
    let outside = Sandbox::empty();
    let elsewhere = outside.path("atlas.html");
    atlas(&outside, elsewhere.to_str().expect("utf-8"), &[]).refused();
    assert!(!elsewhere.exists());
}

/// The board, the sealed House Sessions and Hop's accepted chain are on the page too.
#[test]
fn the_page_shows_the_board_the_house_sessions_and_hop() {
    let sandbox = demo();
    sandbox
        .hpp([
            "board", "claim", "ITEM-7", "--lane", "lane-a", "--model", "gpt-5",
        ])
        .ok();
    crate::harness::record_session(&sandbox, "review", &[]).json(0);
    sandbox.hop_in(&sandbox.root, &["init"]).ok();
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("the page was written");
    for needle in [
        "ITEM-7",
        "CLAIMED",
        "review-cache-eviction",
        "max-rounds",
        "hop status --json",
        "A_",
    ] {
        assert!(page.contains(needle), "{needle} missing from the page");
    }
}

#[test]
fn the_users_records_come_first_and_each_signature_says_whether_it_verified() {
    let sandbox = demo();
    // A second attestation, signed by the checker, with an allowed-signers file that trusts it.
    let key = sandbox.path("checker-key");
    let made = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "checker-b", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs");
    assert!(made.status.success());
    let public = std::fs::read_to_string(format!("{}.pub", key.display())).expect("written");
    let allowed = sandbox.path("allowed");
    std::fs::write(&allowed, format!("checker-b {}", public.trim())).expect("writable");
    let mut args = crate::harness::attest_args("review:002", "approved");
    args.extend(["--sign-key", key.to_str().expect("UTF-8")]);
    sandbox.hpp_in(&sandbox.root, &args).ok();
    sandbox.git([
        "config",
        "hpp.allowedSignersFile",
        allowed.to_str().expect("UTF-8"),
    ]);
    let out = sandbox.path("atlas.html");
    let summary = atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let ids: Vec<String> = summary["sections"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|s| s["id"].as_str().expect("id").to_owned())
        .collect();
    let at = |id: &str| ids.iter().position(|i| i == id).expect(id);
    assert_eq!(at("loops"), 0, "{ids:?}");
    assert!(at("evidence") < at("attestations"));
    assert!(at("hop") < at("map-monitor"));
    assert!(
        ids.iter()
            .filter(|i| i.starts_with("graph-"))
            .all(|g| at(g) > at("map-monitor")),
        "the manifest's graphs come last: {ids:?}"
    );
    let page = std::fs::read_to_string(&out).expect("written");
    assert!(
        page.contains("signature verified (checker-b)"),
        "signed and verified"
    );
    // Signatures are required here (an allowed-signers file is configured), so the unsigned
    // one does not count, and is marked (issue 31, friction 7).
    assert!(
        page.contains("class=\"warn\">does not count: unsigned: signatures are required"),
        "the unsigned one says so"
    );
    assert!(!page.contains(">true<"), "no bare booleans for signatures");
}

#[test]
fn control_a_signature_no_allowed_signer_vouches_for_is_not_shown_as_verified() {
    let sandbox = demo();
    let key = sandbox.path("stranger-key");
    let made = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "stranger", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs");
    assert!(made.status.success());
    let mut args = crate::harness::attest_args("review:002", "approved");
    args.extend(["--sign-key", key.to_str().expect("UTF-8")]);
    sandbox.hpp_in(&sandbox.root, &args).ok();
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("written");
    assert!(
        !page.contains("signature verified"),
        "nothing vouches for it"
    );
    assert!(page.contains("not checked (no allowed-signers file)"));
}

#[test]
fn hop_states_show_their_summaries() {
    let sandbox = demo();
    sandbox.hop_in(&sandbox.root, &["init"]).ok();
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("written");
    assert!(
        page.contains("initial accepted state"),
        "the state's summary is shown"
    );
}

#[test]
fn the_page_opens_with_whether_head_and_main_verify() {
    // Issue 31, friction 7: the page opened with a title bar, a 14-link nav and a loops table;
    // nothing said whether HEAD or main was verified.
    let sandbox = demo();
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("written");
    let verdict = page.find("Is it verified?").expect("the verdict is there");
    let loops = page
        .find("<section id=\"loops\"")
        .expect("the loops are there");
    assert!(verdict < loops, "the verdict comes first");
    assert!(
        page.contains("<li class=\"ok\"><span class=\"mark\">\u{2713}</span><strong>HEAD</strong>"),
        "the attested HEAD verifies"
    );
    assert!(
        page.contains("<strong>main</strong>"),
        "main is protected by default"
    );
    assert!(page.contains("Signatures are not required here"));
    // The manifest's drawings are folded, and last.
    let graphs = page.find("<section id=\"graph-").expect("graphs are drawn");
    assert!(graphs > loops);
    let drawing = page[graphs..]
        .find("<summary>drawing</summary>")
        .expect("a graph has a drawing");
    assert_eq!(
        &page[graphs + drawing - "<details>".len()..graphs + drawing],
        "<details>",
        "folded"
    );
}

#[test]
fn control_a_new_commit_is_not_verified_and_unsigned_records_do_not_count_once_required() {
    let sandbox = demo();
    std::fs::write(sandbox.root.join("later.txt"), "later\n").expect("writable");
    sandbox.git(["add", "later.txt"]);
    sandbox.git(["commit", "-q", "-m", "later"]);
    // Signatures required: an allowed-signers file configured here.
    let (_, public) = crate::harness::keygen(&sandbox, "checker-key");
    let signers = sandbox.path("allowed_signers");
    std::fs::write(&signers, format!("checker-b {public}\n")).expect("writable");
    sandbox.git([
        "config",
        "hpp.allowedSignersFile",
        signers.to_str().expect("UTF-8"),
    ]);
    let out = sandbox.path("atlas.html");
    atlas(&sandbox, out.to_str().expect("utf-8"), &[]).json(0);
    let page = std::fs::read_to_string(&out).expect("written");
    assert!(
        page.contains(
            "<li class=\"fail\"><span class=\"mark\">\u{2717}</span><strong>HEAD</strong>"
        ),
        "{page}"
    );
    assert!(page.contains("not verified: no attestation for its tree"));
    assert!(page.contains("an unsigned record does not count"));
    assert!(
        page.contains("class=\"warn\">does not count: unsigned: signatures are required"),
        "the unsigned attestation is marked"
    );
}
