"""The FRANK protocol (Pagnoni et al., 2021): typology, tutorial and qualification content, traps, relevance, protocol, pages, URLs, importer and exporter."""
