"""The BUMP protocol (Ma et al., 2023): taxonomy, tutorial and qualification content, edit comparison, protocol, expert review, pages, URLs, importer and exporter."""
