//! A small typed HTML (and inline SVG) builder: the only way the report writes markup.
//!
//! Hand-written rather than a template crate: none is in the project's verified set (minijinja is
//! skipped there, askama and maud are not listed), and what the report needs is small: elements,
//! attributes, text, and two kinds of `<script>`. The types make injection impossible by
//! construction rather than by care:
//!
//! - element and attribute *names* are `&'static str`, so only code picks them, never data;
//! - every text child and attribute value is escaped when rendered (`&`, `<`, `>`, `"`, `'`);
//! - `<script>` and `<style>` bodies come from [`Node::code`] (a `&'static str`, the report's own
//!   JavaScript and CSS compiled into the binary) or [`Node::json`] (any JSON value, serialised
//!   with `<`, `>`, `&`, U+2028 and U+2029 written as `\u` escapes, so a model's
//!   `</script><script>alert(1)</script>` or `<!--` cannot end or confuse the block).

use std::fmt::Write as _;

/// A piece of markup.
#[derive(Debug, Clone)]
pub enum Node {
    /// An element with attributes and children.
    Element(Element),
    /// Text, escaped when rendered.
    Text(String),
    /// The body of a `<script>` or `<style>` that the binary itself carries.
    Code(&'static str),
    /// Text already known to be safe in any context: base64 and other generated ASCII that
    /// cannot hold `<` or `&` (checked when built, see [`Node::ascii_data`]).
    Data(String),
}

/// An HTML or SVG element.
#[derive(Debug, Clone)]
pub struct Element {
    name: &'static str,
    attrs: Vec<(&'static str, String)>,
    children: Vec<Node>,
}

/// Elements that have no end tag in HTML.
const VOID: &[&str] = &["br", "hr", "img", "input", "meta", "link", "col"];

/// Starts an element named `name`.
pub(crate) fn el(name: &'static str) -> Element {
    Element {
        name,
        attrs: Vec::new(),
        children: Vec::new(),
    }
}

/// Text, escaped when rendered.
pub fn text(s: impl Into<String>) -> Node {
    Node::Text(s.into())
}

impl Element {
    /// Adds an attribute (its value is escaped).
    #[must_use]
    pub(crate) fn attr(mut self, name: &'static str, value: impl ToString) -> Element {
        self.attrs.push((name, value.to_string()));
        self
    }

    /// Sets the `class` attribute.
    #[must_use]
    pub fn class(self, class: &str) -> Element {
        self.attr("class", class)
    }

    /// Sets the `id` attribute.
    #[must_use]
    pub fn id(self, id: impl ToString) -> Element {
        self.attr("id", id)
    }

    /// Appends a child.
    #[must_use]
    pub fn child(mut self, node: impl Into<Node>) -> Element {
        self.children.push(node.into());
        self
    }

    /// Appends a text child.
    #[must_use]
    pub fn text(self, s: impl Into<String>) -> Element {
        self.child(Node::Text(s.into()))
    }

    /// Appends every node of `nodes`.
    #[must_use]
    pub fn children<N: Into<Node>>(mut self, nodes: impl IntoIterator<Item = N>) -> Element {
        self.children.extend(nodes.into_iter().map(Into::into));
        self
    }

    /// Appends a child in place (for loops that build an element up).
    pub fn push(&mut self, node: impl Into<Node>) {
        self.children.push(node.into());
    }
}

impl Node {
    /// A `<script>` or `<style>` body the binary carries.
    pub fn code(source: &'static str) -> Node {
        Node::Code(source)
    }

    /// A JSON value as the body of a `<script type="application/json">`: `<`, `>` and `&` (and the
    /// two line separators JavaScript once treated as newlines) become `\u` escapes, which JSON
    /// reads back as the same characters, so no text inside can end the block.
    pub fn json(value: &serde_json::Value) -> Node {
        Node::Data(json_for_script(value))
    }

    /// ASCII data that needs no escaping anywhere (base64).
    ///
    /// # Panics
    /// If `data` holds a character other than ASCII letters, digits, `+`, `/`, `=`, `-`, `_`: the
    /// caller promised base64.
    pub(crate) fn ascii_data(data: String) -> Node {
        assert!(
            data.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(&b)),
            "ascii_data takes base64 only"
        );
        Node::Data(data)
    }
}

/// Serialises `value` for a `<script>` block (see [`Node::json`]).
pub(crate) fn json_for_script(value: &serde_json::Value) -> String {
    let json = serde_json::to_string(value).expect("a JSON value always serialises");
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

impl From<Element> for Node {
    fn from(e: Element) -> Node {
        Node::Element(e)
    }
}

impl From<String> for Node {
    fn from(s: String) -> Node {
        Node::Text(s)
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Node {
        Node::Text(s.to_owned())
    }
}

/// Escapes text for an HTML text node or a quoted attribute value.
pub fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

impl Node {
    /// Writes the markup of this node to `out`.
    pub fn render(&self, out: &mut String) {
        match self {
            Node::Text(s) => escape(s, out),
            Node::Code(s) => out.push_str(s),
            Node::Data(s) => out.push_str(s),
            Node::Element(e) => e.render(out),
        }
    }
}

impl Element {
    /// Writes the markup of this element to `out`.
    pub fn render(&self, out: &mut String) {
        let _ = write!(out, "<{}", self.name);
        for (name, value) in &self.attrs {
            let _ = write!(out, " {name}=\"");
            escape(value, out);
            out.push('"');
        }
        out.push('>');
        if VOID.contains(&self.name) {
            return;
        }
        let raw_body = matches!(self.name, "script" | "style");
        for child in &self.children {
            match child {
                // Text inside <script>/<style> is not parsed as markup, so escaping would show;
                // only code and escaped data may go there.
                Node::Text(_) | Node::Element(_) if raw_body => {
                    debug_assert!(false, "<{}> takes only code or data", self.name);
                }
                other => other.render(out),
            }
        }
        let _ = write!(out, "</{}>", self.name);
    }
}

/// A whole document: the doctype, then `html`.
pub fn document(html: Element) -> String {
    let mut out = String::from("<!DOCTYPE html>\n");
    html.render(&mut out);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(node: impl Into<Node>) -> String {
        let mut out = String::new();
        node.into().render(&mut out);
        out
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        let html = render(
            el("p")
                .attr("title", "a\"b'<c>")
                .text("</script><script>alert(1)</script> & co"),
        );
        assert_eq!(
            html,
            "<p title=\"a&quot;b&#39;&lt;c&gt;\">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</p>"
        );
    }

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let value =
            serde_json::json!({ "reply": "</script><script>alert(1)</script> <!-- & \u{2028}" });
        let html = render(
            el("script")
                .attr("type", "application/json")
                .child(Node::json(&value)),
        );
        let body = html
            .strip_prefix("<script type=\"application/json\">")
            .and_then(|b| b.strip_suffix("</script>"))
            .unwrap();
        assert!(!body.contains('<') && !body.contains('>'), "{body}");
        let back: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn void_elements_have_no_end_tag() {
        assert_eq!(
            render(el("input").attr("type", "checkbox")),
            "<input type=\"checkbox\">"
        );
    }

    #[test]
    #[should_panic(expected = "base64 only")]
    fn ascii_data_refuses_markup() {
        let _ = Node::ascii_data("<b>".to_owned());
    }
}
