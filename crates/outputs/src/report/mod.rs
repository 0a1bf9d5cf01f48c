//! The self-contained HTML report with its game viewer ([`html`]). The plain tables (text, CSV,
//! JSON) live in [`crate::table`], a leaf that the domain modules use; they are re-exported here
//! (`report::{Table, Cell, Format, render}`) for the commands that print them beside the report.

pub mod html;

pub use crate::table::{Cell, Format, Table, render};
