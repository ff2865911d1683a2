"""Protocol profiles through the bindings (docs/haven.md, docs/valp.md):
traces built in Python from each protocol's operation sequence give the
findings their rules call for (derived here, step by step), the report's
JSON is the CLI's for the same input, and docs/valp.md's example runs."""

from __future__ import annotations

import contextlib
import hashlib
import io
import re

import pytest

import herald
from conftest import ROOT, run_cli

T = 1_746_432_000
LIFE = 3600


class Haven:
    """Alice offers, Bob and Dave work, Carol verifies."""

    def __init__(self) -> None:
        self.alice, self.bob, self.dave, self.carol = (herald.SigningKey.generate() for _ in range(4))
        self.keys = herald.Keyring()
        for k in (self.alice, self.bob, self.dave, self.carol):
            self.keys.add(k)
        self.steps: list[herald.Envelope] = []

    def offer(self, packet_id="pkt-1", max_steps=20, depth=2, parent=None, at=0, by=None, **extra):
        payload = {
            "type": "offer",
            "packetId": packet_id,
            "summary": "summarise the incident log",
            "objective": "a five-line summary",
            "budget": {"maxSteps": max_steps, "maxTicks": 600},
            "failurePolicy": "release",
            "root": extra.pop("root", packet_id),
            "depth": depth,
            **extra,
        }
        return self.step(by or self.alice, parent, payload, at)

    def step(self, key, parent, payload, at, expires=True):
        if isinstance(payload, str):
            payload = {"type": payload}
        exp = T + at + LIFE if expires else None
        env = (
            herald.genesis(key, payload, ts=T + at, expires=exp)
            if parent is None
            else parent.reply(key, payload, ts=T + at, expires=exp)
        )
        self.steps.append(env)
        return env

    def check(self, now=None):
        report = herald.verify(self.steps, keyring=self.keys, profile="haven", now=now or T + 600)
        ids = [e.id for e in report.envelopes]
        return report, [f"{f.code}@{ids.index(f.id)}" for f in report.profile.findings]


def test_haven_claim_endings_are_clean():
    # complete: offer, claim, yield, evidence, complete, acceptance.
    h = Haven()
    offer = h.offer()
    claim = h.step(h.bob, offer, "claim", 10)
    y = h.step(h.bob, claim, "yield", 20)
    ev = h.step(h.bob, y, {"type": "evidence", "artifact": "summary.md"}, 30)
    done = h.step(h.bob, ev, "complete", 40)
    h.step(h.carol, done, "acceptance", 50)
    report, found = h.check()
    assert (report.ok, found) == (True, [])
    assert (report.profile.name, report.profile.checked, report.profile.skipped) == ("haven", 6, 0)
    # release: Bob releases, Dave claims, proves, completes; Alice records the outcome.
    h = Haven()
    offer = h.offer()
    claim = h.step(h.bob, offer, "claim", 10)
    h.step(h.bob, claim, "release", 20)
    again = h.step(h.dave, offer, "claim", 30)
    ev = h.step(h.dave, again, "evidence", 40)
    done = h.step(h.dave, ev, "complete", 50)
    h.step(h.alice, done, "outcome", 60)
    assert h.check()[1] == []
    # silence-then-settle: Bob claims and goes silent; after his claim
    # expired Alice settles. Audited then, the claim is `expired` (the
    # report is not ok) but it is still Bob's signed step: no finding.
    h = Haven()
    offer = h.offer()
    h.step(h.bob, offer, "claim", 10)
    h.step(h.alice, offer, "settle", 10 + LIFE + 900)
    report, found = h.check(now=T + 10 + LIFE + 900)
    assert found == []
    assert "expired" in report.envelopes[1].codes


def test_haven_bad_inputs_give_their_findings():
    # A completion with no evidence (step 2).
    h = Haven()
    claim = h.step(h.bob, h.offer(), "claim", 10)
    h.step(h.bob, claim, "complete", 20)
    report, found = h.check()
    assert found == ["completion_without_evidence@2"]
    assert not report.ok and all(e.status == "valid" for e in report.envelopes)
    # The worker certifying its own work (step 4).
    h = Haven()
    claim = h.step(h.bob, h.offer(), "claim", 10)
    ev = h.step(h.bob, claim, "evidence", 20)
    done = h.step(h.bob, ev, "complete", 30)
    h.step(h.bob, done, "acceptance", 40)
    assert h.check()[1] == ["self_receipt@4"]
    # A widened child budget (step 2): 50 steps under a parent's 20.
    h = Haven()
    claim = h.step(h.bob, h.offer(), "claim", 10)
    h.offer("pkt-1.1", max_steps=50, depth=1, parent=claim, at=20, by=h.bob, root="pkt-1")
    found = h.check()[1]
    assert found == ["budget_widened@2", "lineage_mismatch@2"]
    # The offerer claiming its own packet, whatever name it gives (step 1).
    h = Haven()
    h.step(h.alice, h.offer(), {"type": "claim", "claimer": "bob"}, 10)
    assert h.check()[1] == ["claim_by_offerer@1"]
    # A secret in the evidence row and a step without expires (step 2).
    h = Haven()
    claim = h.step(h.bob, h.offer(), "claim", 10)
    h.step(h.bob, claim, {"type": "evidence", "token": "ghp_" + "a1" * 12}, 20, expires=False)
    report, found = h.check()
    assert found == ["missing_expires@2", "secret_in_payload@2"]
    assert "a1a1" not in report.to_json()


def test_the_json_is_the_clis(tmp_path, herald_bin):
    h = Haven()
    claim = h.step(h.bob, h.offer(), "claim", 10)
    h.step(h.bob, claim, "complete", 20)
    trace = tmp_path / "trace.cbor"
    trace.write_bytes(b"".join(bytes(e) for e in h.steps))
    keys = tmp_path / "keys"
    keys.mkdir()
    for i, k in enumerate((h.alice, h.bob, h.dave, h.carol)):
        (keys / f"k{i}.pub").write_text(k.keyring_line() + "\n")
    now = str(T + 600)
    cli = run_cli(herald_bin, "verify", trace, "--keyring", keys, "--now", now, "--profile", "haven", "--json")
    assert cli.returncode == 1
    report = herald.verify(trace, keyring=keys, now=T + 600, profile="haven")
    assert report.to_json() == cli.stdout.rstrip("\n")
    assert report.to_dict()["profile"]["findings"][0]["code"] == "completion_without_evidence"
    # Without a profile: no member, and no `profile` attribute.
    plain = herald.verify(trace, keyring=keys, now=T + 600)
    assert plain.profile is None and "profile" not in plain.to_dict()


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="not a profile"):
        herald.verify([], profile="a2a")


def test_valp_md_example_runs():
    text = (ROOT / "docs" / "valp.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```\n", text, re.S)
    assert len(blocks) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "docs/valp.md", "exec"), {})
    assert out.getvalue().splitlines() == [
        "True []",
        "['evidence_digest_mismatch']",
        "['self_verification']",
    ]


def test_valp_replay_and_rollback():
    inst, user, leader = (herald.SigningKey.generate() for _ in range(3))
    keys = herald.Keyring()
    for k in (inst, user, leader):
        keys.add(k)

    def msg(mid, corr, cause, kind, epoch, payload):
        return {
            "schema_version": "valp-message.v1",
            "message_id": mid,
            "correlation_id": corr,
            "causation_id": cause,
            "sender_principal_id": "p",
            "kind": kind,
            "leader_epoch": epoch,
            "payload": payload,
            "payload_digest": "sha256:" + hashlib.sha256(herald.encode(payload)).hexdigest(),
        }

    def send(key, parent, m, at):
        if parent is None:
            return herald.genesis(key, m, ts=T + at, expires=T + at + LIFE)
        return parent.reply(key, m, ts=T + at, expires=T + at + LIFE)

    init = send(inst, None, msg("m1", "c1", None, "command.installation.init", 0, {}), 0)
    act = send(inst, init, msg("m2", "c1", "m1", "event.leader.activated", 0, {"active_leader_epoch": 1}), 1)
    work = send(leader, act, msg("m3", "c1", "m2", "command.task.start", 1, {"task": "t"}), 2)
    # m3 again under another correlation id (step 3); then epoch 0 (step 4).
    replay = send(leader, act, msg("m3", "c2", "m2", "command.task.start", 1, {"task": "t"}), 3)
    old = send(user, work, msg("m4", "c1", "m3", "command.leader.select", 0, {}), 4)
    report = herald.verify([init, act, work, replay, old], keyring=keys, now=T + 600, profile="valp")
    assert report.profile.codes == ["replayed_message", "epoch_rollback"]
    assert [f.id for f in report.profile.findings] == [replay.id_hex, old.id_hex]
