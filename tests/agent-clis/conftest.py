"""Fixtures: the plugins packed once (scripts/pack-agent-plugins.sh, the release binary inside),
a fresh work folder per test."""

import pytest

import clis


@pytest.fixture(scope="session")
def plugins(tmp_path_factory):
    assert clis.BIN.exists(), f"{clis.BIN} is missing: cargo build --release -p loopguard-cli"
    assert (clis.CLIS / "claude").exists(), "the CLIs are missing: . scripts/setup-agent-clis.sh"
    return clis.pack_plugins(tmp_path_factory.mktemp("plugins"))
