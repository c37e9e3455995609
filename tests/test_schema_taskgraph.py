import pytest

from graphstore import SCHEMA, SchemaError, TaskGraph


def small_graph(task_id="t/demo", p=0.7):
    g = TaskGraph(task_id, "test")
    for i in range(3):
        g.add_node(f"s{i}", "State", index=i)
    g.add_edge("", "s0", "START")
    g.add_edge("s0", "s1", "MOVE", action=0, p=p)
    g.add_edge("s0", "s2", "MOVE", action=0, p=1 - p)
    return g


def test_valid_graph_seals_with_stable_hash():
    a, b = small_graph().seal(), small_graph().seal()
    assert a.task["content_hash"] == b.task["content_hash"]
    assert a == b
    assert small_graph(p=0.6).seal().task["content_hash"] != a.task["content_hash"]


def test_unknown_property_is_named():
    g = small_graph()
    g.add_node("x", "State", index=9, colour="red")
    with pytest.raises(SchemaError, match=r"State node 'x': unknown property colour"):
        g.validate()


def test_wrong_type_is_named():
    g = small_graph()
    g.add_node("x", "State", index="nine")
    with pytest.raises(SchemaError, match=r"'x': property 'index': expected int"):
        g.validate()


def test_missing_required_property():
    g = small_graph()
    g.add_node("r", "Reward", values=[1.0])
    with pytest.raises(SchemaError, match=r"required property 'kind'"):
        g.validate()


def test_probabilities_must_sum_to_one():
    g = small_graph(p=0.7)
    g.add_edge("s1", "s2", "MOVE", action=0, p=0.5)
    with pytest.raises(SchemaError, match=r"node 's1', action 0: probabilities of MOVE edges sum to 0.5"):
        g.validate()


def test_edge_endpoints_follow_schema():
    g = small_graph()
    g.add_node("r", "Reward", kind="fixed", values=[1.0])
    g.add_edge("r", "s0", "MOVE", action=0, p=1.0)
    with pytest.raises(SchemaError, match=r"Reward->State not allowed"):
        g.validate()


def test_edges_need_existing_nodes():
    g = small_graph()
    with pytest.raises(SchemaError, match=r"no node 'nowhere'"):
        g.add_edge("s0", "nowhere", "MOVE", action=1, p=1.0)


def test_schema_declares_graph_types():
    assert {"Task", "State", "Reward", "Condition"} <= set(SCHEMA.nodes)
    assert ("State", "State") in SCHEMA.rels["MOVE"].endpoints
    assert SCHEMA.rels["MOVE"].property("p").kind == "float"
