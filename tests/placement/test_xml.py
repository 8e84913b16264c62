"""Dynamic state reads back as escaped, indented XML in the same bytes every time."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextchef.placement.xml import escape_xml, object_to_xml, xml_name


def test_nested_values_render_with_indentation_at_every_level() -> None:
    value = {"b": {"inner": [1, {"x": True}]}, "a": "text"}
    assert object_to_xml(value, "state") == (
        "<state>\n"
        "  <a>text</a>\n"
        "  <b>\n"
        "    <inner>\n"
        "      <item>1</item>\n"
        "      <item>\n"
        "        <x>true</x>\n"
        "      </item>\n"
        "    </inner>\n"
        "  </b>\n"
        "</state>"
    )


def test_special_characters_are_escaped() -> None:
    assert (
        object_to_xml("<a & 'b' \"c\">", "v")
        == "<v>&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;</v>"
    )


def test_none_fields_are_left_out_and_empty_containers_are_self_closing() -> None:
    assert object_to_xml({"a": None, "b": [], "c": {}}, "s") == "<s>\n  <b/>\n  <c/>\n</s>"
    assert object_to_xml(None) == ""


def test_multiline_text_is_indented_inside_its_element() -> None:
    assert object_to_xml({"note": "one\ntwo"}, "s") == (
        "<s>\n  <note>\n    one\n    two\n  </note>\n</s>"
    )


def test_keys_become_valid_xml_names() -> None:
    assert xml_name("first name") == "first_name"
    assert xml_name("1st") == "_1st"
    assert xml_name("xml_thing") == "_xml_thing"
    assert xml_name("") == "_"
    assert object_to_xml({"<script>": 1}, "s") == "<s>\n  <_script_>1</_script_>\n</s>"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(json_values)
def test_dict_key_order_never_changes_the_bytes(value: object) -> None:
    def reverse(v: object) -> object:
        if isinstance(v, dict):
            return {k: reverse(v[k]) for k in reversed(list(v))}
        if isinstance(v, list):
            return [reverse(i) for i in v]
        return v

    assert object_to_xml(value, "s") == object_to_xml(reverse(value), "s")


@given(st.text())
def test_escaped_text_never_contains_markup(text: str) -> None:
    escaped = escape_xml(text)
    assert "<" not in escaped and ">" not in escaped and '"' not in escaped
