import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasks import GraphNotationError, parse_condition, parse_graph


def table(parsed, node, action):
    return dict(parsed.edges[node][action])


def test_list_scalar_and_terminal_forms():
    g = parse_graph({0: [1, 2], 1: 2, 2: []})
    assert table(g, 0, 0) == {1: 1.0} and table(g, 0, 1) == {2: 1.0}
    assert table(g, 1, 0) == {2: 1.0}
    assert g.terminal(2) and not g.terminal(0) and g.n_actions == 2


def test_two_target_tuple():
    g = parse_graph({0: ([1, 2], 0.7), 1: [], 2: []})
    assert table(g, 0, 0) == pytest.approx({1: 0.7, 2: 0.3})
    assert table(g, 0, 1) == pytest.approx({2: 0.7, 1: 0.3})


def test_three_target_tuple_spreads_the_rest_uniformly():
    g = parse_graph({0: ([1, 2, 3], 0.7), 1: [], 2: [], 3: []})
    for action, intended in enumerate([1, 2, 3]):
        expected = {t: (0.7 if t == intended else 0.15) for t in (1, 2, 3)}
        assert table(g, 0, action) == pytest.approx(expected)


def test_full_dict_with_skip_anywhere():
    a = parse_graph({0: {"skip": True, 0: ([1, 2], 0.5)}, 1: [], 2: []})
    b = parse_graph({0: {0: ([1, 2], 0.5), "skip": True}, 1: [], 2: []})
    assert a.skip == b.skip == {0}
    assert table(a, 0, 0) == table(b, 0, 0) == pytest.approx({1: 0.5, 2: 0.5})


def test_json_encodings_match_python_forms():
    py = parse_graph({0: ([1, 2], 0.7), 1: [], 2: []})
    js = parse_graph({"0": {"targets": [1, 2], "p": 0.7}, "1": [], "2": []})
    assert py.edges == js.edges
    dist = parse_graph({"0": [{"targets": [1, 2], "probs": [0.25, 0.75]}], "1": [], "2": []})
    assert table(dist, 0, 0) == {1: 0.25, 2: 0.75}


@pytest.mark.parametrize(
    "graph, message",
    [
        ({0: [1, 5], 1: []}, r"node 0, action 1: target 5 is not a node"),
        ({0: ([1, 2], 1.3), 1: [], 2: []}, r"node 0, tuple: probability 1.3 outside \[0, 1\]"),
        ({0: {"left": 1}, 1: []}, r"node 0, action key: expected an integer, got 'left'"),
        ({0: {0: ([], 0.5)}, 1: []}, r"node 0, action 0: empty list of targets"),
        ({0: {1.5: 1}, 1: []}, r"node 0, action key: expected an integer"),
        ({0: [1], 2: []}, r"target 1 is not a node"),
        (
            {0: {0: {"targets": [1, 2], "probs": [0.5, 0.2]}}, 1: [], 2: []},
            r"node 0, action 0: probabilities sum to 0.7",
        ),
    ],
)
def test_invalid_graphs_name_node_and_action(graph, message):
    with pytest.raises(GraphNotationError, match=message):
        parse_graph(graph)


@given(
    k=st.integers(min_value=2, max_value=8),
    p=st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
def test_tuple_distributions_always_sum_to_one(k, p):
    graph = {0: (list(range(1, k + 1)), p), **{i: [] for i in range(1, k + 1)}}
    parsed = parse_graph(graph)
    for action in range(k):
        probs = table(parsed, 0, action)
        assert sum(probs.values()) == pytest.approx(1.0)
        assert probs.get(action + 1, 0.0) == pytest.approx(p if k > 1 else 1.0)


def test_conditions_in_both_forms():
    reference_form = parse_condition("x", {0: {0: 1, 1: 2}})
    file_form = parse_condition("x", {"edges": {"0": {"0": 1, "1": 2}}})
    assert reference_form.overrides == file_form.overrides == {(0, 0): ((1, 1.0),), (0, 1): ((2, 1.0),)}
    assert parse_condition("win", {"reward": 1}).reward == 1.0
    with pytest.raises(GraphNotationError, match=r"condition 'bad', node 0, action 0: target 9 is not a node"):
        parse_condition("bad", {0: {0: 9}}, n_nodes=3)
