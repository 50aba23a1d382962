//! Pieces the pages share.

pub mod admin_list;
pub mod chart;
pub mod duration_chart;
pub mod form;
pub mod layout;
pub mod log_viewer;
pub mod retry_chart;
pub mod retry_editor;
pub mod retry_evidence;
pub mod status;
pub mod ticker;
