"""Each reward kind owns its fields (tasks.rewards: a `RewardParams` dataclass per kind): a
Reward node's properties go to a spec and back unchanged for every registered kind; a field
that a kind does not have, or a required one missing, is refused in one line naming the kind
and the field; the Reward node's schema properties are the kinds' fields, as before; and every
built-in task's content hash is what the code gave before the kinds owned their fields."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass, fields
from typing import Any, Mapping

import pytest

import tasks
from graphstore import open_store
from graphstore.schema import SCHEMA
from graphstore.taskgraph import TaskGraph
from tasks.rewards import (
    REWARD_KINDS,
    BatchSource,
    DriftingParams,
    NoParams,
    RewardKind,
    RewardParams,
    RewardSource,
    RewardSpec,
    RewardSpecError,
    WalkParams,
    param,
    register_reward_kind,
    reward_spec,
    spec_from_props,
)

HASHES = {  # tasks.build(id).content_hash() of every built-in task, computed from the code before the change
    "decision/grid/cued_t_maze/left": "5dcba7d73ec25737714708058127963e",
    "decision/grid/cued_t_maze/right": "93397668452367339b0f93900e0d86e2",
    "decision/grid/tolman/micro": "fa59628e4e2e807a87636178ce3b17fb",
    "decision/grid/tolman/small": "cdb2ddd4254cd555fc6fd00c99b1ac4d",
    "decision/horizon": "e3172a44f8fd25437914e3014fde58c4",
    "decision/iowa-gambling": "215ca02908d03e1267351f7f6a7d0b21",
    "decision/patch-foraging": "13b135d513930a63df20380088d75c5a",
    "decision/probabilistic-selection": "a41412cf99df6bb0ef69d77eb2570782",
    "decision/restless-bandit": "98b58195a42846f0018d071e0a956901",
    "decision/reversal-learning": "b22d15b01301cef167fef34ffb7b7255",
    "decision/reversal-learning-criterion": "84807497803f6ac0b6e6ca6565275b0c",
    "neuronav/graph/human_a": "8c954b1edff6e3af7f01b163d4243a98",
    "neuronav/graph/human_b": "3453fe1869d8482a8f30795637230c67",
    "neuronav/graph/linear": "bb1058c09302f6af5e9cad997f67727a",
    "neuronav/graph/neighborhood": "825dd3edb811e306dd18b96771553420",
    "neuronav/graph/ring": "fb562492c5a1d868e76a6068b7355a5c",
    "neuronav/graph/t_graph": "a6af5597f6592d8ede90871ece658603",
    "neuronav/graph/t_loop": "e4ec2ac5afda200d26258973eb0bc9b7",
    "neuronav/graph/three_arm_bandit": "7d66f9b6a475e0f75728349d1e223b9e",
    "neuronav/graph/two_step": "7bd1a58ca204faa2a338e0902bfef2c5",
    "neuronav/graph/two_way_linear": "172cf121baacb5de706db537f28a4c83",
    "neuronav/graph/variable_magnitude": "d3ffd9969739f998453f2b69c1edb0f5",
    "neuronav/grid/circle/large": "407c63fe6c878b3248f93cd0125a1226",
    "neuronav/grid/circle/micro": "c0d77c6e27019c874596f4319ccac4de",
    "neuronav/grid/circle/small": "37416ad7c5f40dd8327a49bac8adca40",
    "neuronav/grid/detour/large": "38d880bb53ba0fd9ad6a700d376d63d1",
    "neuronav/grid/detour/micro": "5c05ca685650f349984f9f5fd1f77a25",
    "neuronav/grid/detour/small": "b6afe2670dbfebff094a8d175fadacc3",
    "neuronav/grid/detour_block/large": "c235c70aba57d0b58e2b7117eb4fff89",
    "neuronav/grid/detour_block/micro": "6a265080571764d62451991a083c5b34",
    "neuronav/grid/detour_block/small": "9078db27c3f48f2a3bc9e2d2c5d2e22f",
    "neuronav/grid/empty/large": "d9adb176aa332e59babb39ab9b3bed5f",
    "neuronav/grid/empty/micro": "06ecbbaf555791f9938a3361e927643b",
    "neuronav/grid/empty/small": "6abfcd432ad026b73aee107b4160db1b",
    "neuronav/grid/four_rooms/large": "3c49322bdb2fce0d63b09612b408a337",
    "neuronav/grid/four_rooms/micro": "f35572fd8358485bd61d0dcbdfd50319",
    "neuronav/grid/four_rooms/small": "c0e2de7e250dcfd7c4180a8f013a2b57",
    "neuronav/grid/four_rooms_split/large": "5ff309146343f43e4915767603ee3323",
    "neuronav/grid/four_rooms_split/micro": "e40b260a7a50677b659f1de68c28e84d",
    "neuronav/grid/four_rooms_split/small": "736f77d4607250ba5435d0e0a202fdd0",
    "neuronav/grid/hairpin/large": "8918ac3f914b87b445c501d0a0477e9b",
    "neuronav/grid/hairpin/micro": "0d0a69b6ba900fd8dac8eda32ea2ded1",
    "neuronav/grid/hairpin/small": "8a55666796f9d43e3f8b12a3eee14561",
    "neuronav/grid/hallways/large": "79565a51511c38ba75372d0c6e1cecde",
    "neuronav/grid/hallways/micro": "f1e549ccd3076a84974ae078c154d3df",
    "neuronav/grid/hallways/small": "60ac14bde9af3c7e0687c5b5f6b30ea2",
    "neuronav/grid/i_maze/large": "be49e0f0c7b57c413ab5ddce7e63ddd2",
    "neuronav/grid/i_maze/micro": "16284e019dded7c0a85aaa15055a9e03",
    "neuronav/grid/i_maze/small": "f14cf53dc4bf4791aa79522bfa9c4d76",
    "neuronav/grid/narrow/large": "2b9e83fd75a69bbba50dbc16b278f4d9",
    "neuronav/grid/narrow/micro": "c8b0685d995a9f13e00d8082f13798fb",
    "neuronav/grid/narrow/small": "ff04f2a5f04bf7d252731041f4f30cb9",
    "neuronav/grid/obstacle/large": "9522ef263cf6dfe189b501b70e02ffac",
    "neuronav/grid/obstacle/micro": "de4fdc430b0314caa9a81d51d65f97cc",
    "neuronav/grid/obstacle/small": "7f9ed10f2ca4d21c5e2c363aa530ba5c",
    "neuronav/grid/outer_ring/large": "e669142d9a16d158e1dafb1985eecafe",
    "neuronav/grid/outer_ring/micro": "f62db25f4b7733a02faa5f093dc6a92b",
    "neuronav/grid/outer_ring/small": "a7ffa6a22cc1d67c90c73f7ce63de1ef",
    "neuronav/grid/ring/large": "1a2f90b061f08afa5b786a904f0424c2",
    "neuronav/grid/ring/micro": "a986b6177285d4551c14e52122787d18",
    "neuronav/grid/ring/small": "17bde9ae403c225a505d21835105e996",
    "neuronav/grid/s_maze/large": "e68e94efccfe0e51973d92d1740f7d65",
    "neuronav/grid/s_maze/micro": "cb48ae6055c35d0c53cc793745344438",
    "neuronav/grid/s_maze/small": "694d1e7ef497d59a678286f131d73c79",
    "neuronav/grid/t_maze/large": "d8ab3a9267c0b7775ef63ff3064b6bae",
    "neuronav/grid/t_maze/micro": "4d310dcbb7e243377886f92a0fd3b55d",
    "neuronav/grid/t_maze/small": "490bacf7fac7329942b4e58a8623addc",
    "neuronav/grid/two_rooms/large": "a3fca46a9fe365773ebc7c4e4d7c1f9d",
    "neuronav/grid/two_rooms/micro": "6109cbb44eabfd6ea3b8fb0eaa1e82e5",
    "neuronav/grid/two_rooms/small": "717a36cdc9bbb96a9f2517aaac788f1e",
    "neuronav/grid/two_step/large": "71975f2b717f35bbcdeeaf54bc399af0",
    "neuronav/grid/two_step/micro": "6e47aa68e65f39ad463977380120a91b",
    "neuronav/grid/two_step/small": "c43435b979e375ac3792569021a9c489",
    "neuronav/grid/u_maze/large": "dd15f91882dc79fe953b5e6db51fa3f4",
    "neuronav/grid/u_maze/micro": "e94341acd0a2395808545a08ac36c462",
    "neuronav/grid/u_maze/small": "a0ee6f79f809903320ea05ff1b367771",
    "poge/scaled_world0": "2934362822b58c579b8e48176379d7a5",
    "poge/world0": "cd6e4deafa4d1a7181f64630a84f8898",
    "poge/world1": "14e882f861d300c238b45e9ccb51d664",
    "poge/world2": "c44286a54c4c6ceb46d424377474e4c5",
    "poge/world3": "a27899ff934279f06ed691574adb1572",
    "rewardgym/gonogo": "aeb4c691a682e338e09851b61690acfd",
    "rewardgym/hcp": "1571dd4e270f3b14fb63b19105751b3e",
    "rewardgym/mid": "721beb7725296d385b38b7b0b235e280",
    "rewardgym/posner": "f598b8b29f9712dafde3507b16562e3a",
    "rewardgym/risk-sensitive": "34279a1748131314942614b8d3243cdb",
    "rewardgym/robotfactory": "dac66bbc16046aafdc8f0d48a8781735",
    "rewardgym/two-armed-bandit": "c1cbcac1fb6209d7f73efbaffc41b3ee",
    "rewardgym/two-step": "5e3321bae59a51e7bc8242504c20a706",
    "room/big": "b7a47b90a455a2469471a8c9fdfa598f",
    "room/small": "d486f3bc97436bf51c91162457b600bc",
    "room/v1/l": "b169637d2d14cabac122fc0ee62e6a8e",
    "room/v1/m": "7c1b3f9939077441474ed1c18282e52b",
    "room/v1/s": "4f3c59afaf65d5182755bb68f66820b1",
    "room/v1/xs": "1ef3dc3d79d8b3852def70eb033968a6",
    "room/v1/xxs": "f80ff64231186ff24cbb93216b1e94c8",
    "room/v2/l": "17aeac7fb0ca65b888e391ec2287142c",
    "room/v2/m": "7ebef9a557559c63dce165aa0c03ae9e",
    "room/v2/s": "d80af2ceb170492a68efa640070467c7",
    "room/v2/xl": "120ae0490bf247fbf02568b01b733a50",
    "room/v2/xl-different-prob": "e3766c4ba7b0112738138d297a940ce0",
    "room/v2/xxs": "e5171d7ac971cddf1d54faeca523e229",
    "room/v3/dev": "d8482c6ea742428b2af8d2b30cc61bb9",
    "room/v3/large-01": "9a3f66c5696854fc15837ef676618c6a",
    "room/v3/medium-01": "86f0f3c3818cf20c7c40cf4af8205944",
    "room/v3/medium-02": "3f4e61cec9393ae2e1ff9522d204c012",
    "room/v3/small-01": "550eacd3ba09b68b5219bf2b766df283",
    "room/v3/small-02": "a47403c9392278e0293fa215f6af103c",
}

# the Reward node's properties (name, store type) as tasks/graph/schema.py declared them by hand
REWARD_PROPERTIES = [
    ("uid", "str"), ("task", "str"), ("kind", "str"), ("values", "float[]"), ("probs", "float[]"),
    ("borders", "float[]"), ("sd", "float"), ("losses", "float[]"), ("decay", "float"), ("center", "float"),
    ("noise", "float"), ("rounded", "bool"), ("criterion", "int"), ("gaps", "float[]"), ("arm", "int"),
    ("first", "bool"), ("group", "str"), ("visible", "bool"), ("terminate", "bool"),
]

# Reward nodes the built-in tasks do not hold: optional fields left out, defaults written
EXTRA_NODES = [
    {"kind": "walk", "values": [50.0], "decay": 0.9836, "center": 50.0, "sd": 2.8, "noise": 4.0},
    {"kind": "game", "values": [40.0, 60.0], "gaps": [4.0, 8.0], "arm": 1},
    reward_spec({"kind": "drifting", "values": [1, 0]}).node_props(),
    reward_spec({"kind": "walk", "values": [3]}).node_props(),
]


GRAPH_FAMILIES = ("rewardgym", "neuronav/graph", "decision")  # their Reward nodes are reward kinds' (not a grid's)


@functools.cache
def built() -> dict[str, TaskGraph]:
    """Every built-in task, built once for the module's tests."""
    return {task_id: tasks.build(task_id) for task_id in tasks.builtin_ids()}


@functools.cache
def reward_nodes() -> list[dict]:
    """Every graph-task Reward node of the built-in tasks (one of each distinct set of properties)."""
    seen: dict[str, dict] = {}
    for graph in built().values():
        if graph.family not in GRAPH_FAMILIES:
            continue
        for node in graph.graph.nodes:
            props = graph.props(node)
            if graph.label(node) == "Reward" and "kind" in props:
                seen.setdefault(repr(sorted(props.items())), props)
    return list(seen.values()) + EXTRA_NODES


def example(kind: str) -> dict:
    return next(props for props in reward_nodes() if props["kind"] == kind)


def test_every_registered_kind_round_trips_node_props_to_spec_and_back() -> None:
    assert {props["kind"] for props in reward_nodes()} == set(REWARD_KINDS)  # an example of every kind
    for props in reward_nodes():
        spec = spec_from_props(props)
        assert isinstance(spec.params, REWARD_KINDS[props["kind"]].params)
        assert spec.node_props() == props
        assert json.dumps(spec.node_props(), sort_keys=True) == json.dumps(props, sort_keys=True)  # 1 is not 1.0
        assert spec_from_props(spec.node_props()) == spec
        assert RewardSpec.of(spec.kind, spec.values, **spec.params.props()) == spec


def test_a_stored_node_reads_back_as_the_same_spec_the_store_columns_it_lacks_aside() -> None:
    drifting = example("drifting")
    unset = {name: None for name in ("probs", "losses", "criterion", "gaps", "arm", "first")}
    stored = {**drifting, **unset, "uid": "rewardgym/two-step/r3", "task": "rewardgym/two-step", "group": None}
    assert spec_from_props(stored).node_props() == drifting


@pytest.mark.parametrize("kind", sorted(REWARD_KINDS))
def test_a_field_foreign_to_a_kind_is_refused_in_one_line_naming_both(kind: str) -> None:
    own = set(REWARD_KINDS[kind].params.names())
    foreign = sorted({name for other in REWARD_KINDS.values() for name in other.params.names()} - own) + ["colour"]
    for name in foreign:
        with pytest.raises(RewardSpecError) as raised:
            spec_from_props({**example(kind), name: 1.0})
        message = str(raised.value)
        assert f"a {kind} reward has no field {name!r}" in message and "\n" not in message
        with pytest.raises(RewardSpecError, match=f"a {kind} reward has no field {name!r}"):
            RewardSpec.of(kind, tuple(example(kind)["values"]), **{name: 1.0})
        with pytest.raises(RewardSpecError, match=f"unknown field.*{name}.*a {kind} reward"):
            reward_spec({**example(kind), name: 1.0}, "rewards[3]")


@pytest.mark.parametrize("kind", sorted(REWARD_KINDS))
def test_a_required_field_missing_is_refused_naming_the_kind_and_the_field(kind: str) -> None:
    required = [f.name for f in fields(REWARD_KINDS[kind].params) if f.default is not None]
    for name in required:
        props = {k: v for k, v in example(kind).items() if k != name}
        with pytest.raises(RewardSpecError, match=f"^a {kind} reward needs {name!r}$"):
            spec_from_props(props)


def test_a_spec_holds_the_parameters_of_its_own_kind() -> None:
    with pytest.raises(RewardSpecError, match="a walk reward's parameters are WalkParams, got DriftingParams"):
        RewardSpec("walk", (1.0,), DriftingParams((0.2, 0.8), 0.1))
    with pytest.raises(RewardSpecError, match="a drifting reward's parameters are DriftingParams, got NoParams"):
        RewardSpec("drifting", (1.0, 0.0))
    with pytest.raises(RewardSpecError, match="a fixed reward's parameters are NoParams, not WalkParams"):
        WalkParams.of(RewardSpec("fixed", (1.0,), NoParams()))
    with pytest.raises(RewardSpecError, match="unknown reward kind 'gamma'"):
        RewardSpec.of("gamma", (1.0,))


def test_the_reward_node_declares_the_same_properties_made_from_the_kinds_fields() -> None:
    reward = SCHEMA.node_type("Reward")
    assert [(p.name, p.kind) for p in reward.properties] == REWARD_PROPERTIES
    decay = reward.property("decay")
    assert decay is not None and "walk: the share of its mean a walk keeps per step" in decay.doc


def test_every_built_in_task_has_the_content_hash_it_had_before() -> None:
    now = {task_id: graph.content_hash() for task_id, graph in built().items()}
    assert {task_id: now.get(task_id) for task_id in HASHES} == HASHES


def test_a_task_of_each_kind_is_stored_and_read_back_with_that_hash() -> None:
    ids: dict[str | None, str] = {}
    for task_id, graph in built().items():  # the first built-in task with a reward of each kind
        if graph.family in GRAPH_FAMILIES:
            for node in graph.graph.nodes:
                ids.setdefault(graph.props(node).get("kind") if graph.label(node) == "Reward" else None, task_id)
    ids.pop(None, None)
    assert set(ids) == set(REWARD_KINDS)
    with open_store(":memory:") as store:
        for task_id in set(ids.values()):
            store.put(built()[task_id])
            assert store.content_hash(task_id) == HASHES[task_id]
            assert store.get(task_id).content_hash() == HASHES[task_id]


@dataclass(frozen=True)
class CountParams(RewardParams):
    sd: int = param("int", "an sd stored as a whole number")


class Count(RewardKind):
    name = "count"
    params = CountParams

    def check(self, values: tuple[float, ...], value: Mapping[str, Any], where: str) -> RewardSpec:
        return RewardSpec.of(self.name, values, sd=value.get("sd"))

    def expected(self, spec: RewardSpec) -> float:
        return spec.values[0]

    def source(self, spec: RewardSpec) -> RewardSource:
        raise NotImplementedError

    def batch(self, specs: list[RewardSpec], n_envs: int) -> BatchSource:
        raise NotImplementedError


def test_a_kind_whose_field_clashes_with_another_kinds_type_is_refused() -> None:
    with pytest.raises(ValueError, match="reward kind 'count': field 'sd' is stored as int, another kind's as float"):
        register_reward_kind(Count())
    assert "count" not in REWARD_KINDS


SKEW = """
from dataclasses import dataclass

from graphstore import open_store
from graphstore.schema import SCHEMA
from gym_bridge.graph.compiled import compile_from_store
from tasks.graph.definitions import build_graph_task
from tasks.rewards import RewardKind, RewardParams, RewardSpec, param, register_reward_kind


@dataclass(frozen=True)
class SkewParams(RewardParams):
    skew: float = param("float", "how lopsided the payoffs are")


class Skew(RewardKind):
    name = "skew"
    params = SkewParams

    def check(self, values, value, where):
        return RewardSpec.of(self.name, values, skew=value.get("skew"))

    def expected(self, spec):
        return spec.values[0] + SkewParams.of(spec).skew

    def source(self, spec):
        raise NotImplementedError

    def batch(self, specs, n_envs):
        raise NotImplementedError


SCHEMA.node_type("Reward")  # the schema is read before the kind is registered
register_reward_kind(Skew())
with open_store(":memory:") as store:
    graph = build_graph_task("user/skew", "rewardgym", {
        "graph": {"0": [1], "1": []}, "rewards": {"1": {"kind": "skew", "values": [1.0], "skew": 0.5}}})
    store.put(graph)
    print(compile_from_store(store, "user/skew").reward_specs[1])
"""


def test_a_kind_with_a_field_of_its_own_is_one_class_and_one_registration() -> None:
    """No schema line: its field becomes a Reward node property (in a fresh process: the kind
    and the property would stay registered)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SKEW)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "RewardSpec(kind='skew', values=(1.0,), params=SkewParams(skew=0.5))"
