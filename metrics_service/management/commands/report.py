"""``manage.py report --campaign SLUG [filters] [--spearman residuals|ranks] [--auc-references per_pair|once]
[--include-incomplete] [--no-partial] [--kendall] [--json] [--outputs DIR]``.

``--outputs DIR`` also writes the paper tables (LaTeX and CSV) and figures (SVG and PNG) of
``metrics_service.paper`` into DIR; without ``--dataset`` the correlation table gets one column block per
dataset of the campaign beside "All data" (FRANK Table 2).

The text form fits 100 columns: wide tables (the Williams matrix, per-type pair statistics) are split into
blocks of columns, p-values are printed in scientific notation and intervals as ``[low, high]``.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics_service.report import ReportError, get_or_compute_report

WIDTH = 100
LABEL_WIDTH = 24


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _p(value) -> str:
    """A p-value in scientific notation (``0.000`` hides everything that matters)."""
    return "-" if value is None else f"{value:.1e}"


def _ci(interval) -> str:
    return "-" if not interval else f"[{interval[0]:.2f},{interval[1]:.2f}]"


def _label(text: str, width: int = LABEL_WIDTH) -> str:
    text = str(text)
    return text if len(text) <= width else text[: width - 1] + "~"


def _render(headers: list[str], rows: list[list[str]]) -> str:
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [" ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip() for r in cells]
    lines.insert(1, " ".join("-" * w for w in widths))
    return "\n".join(lines)


def table(headers: list[str], rows: list[list], width: int = WIDTH) -> str:
    """A left-labelled table no wider than ``width``: extra columns go to further blocks, the label repeats."""
    text_rows = [[_label(_fmt(row[0]))] + [v if isinstance(v, str) else _fmt(v) for v in row[1:]] for row in rows]
    headers = [_label(headers[0])] + headers[1:]
    label_width = max(len(r[0]) for r in [headers, *text_rows])
    blocks, current, used = [], [], label_width
    for j in range(1, len(headers)):
        column_width = max(len(headers[j]), *(len(r[j]) for r in text_rows)) if text_rows else len(headers[j])
        if current and used + 1 + column_width > width:
            blocks.append(current)
            current, used = [], label_width
        current.append(j)
        used += 1 + column_width
    blocks.append(current)
    out = []
    for block in blocks:
        out.append(_render([headers[0], *[headers[j] for j in block]], [[r[0], *[r[j] for j in block]] for r in text_rows]))
    return "\n\n".join(out)


def wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


class Command(BaseCommand):
    help = "Print a campaign's analysis report: agreement, error distribution, metric correlations, minimal pairs."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("--split", default="all", choices=["all", "valid", "test"])
        parser.add_argument("--dataset", default=None, choices=["cnndm", "xsum", "other"])
        parser.add_argument("--system", default=None, help="Only this system's summaries.")
        parser.add_argument("--no-partial", action="store_true", help="Plain instead of partial correlations.")
        parser.add_argument("--spearman", default="residuals", choices=["residuals", "ranks"],
                            help="Partial Spearman: of the residuals (FRANK, default) or rank-then-residualise.")
        parser.add_argument("--auc-references", default="per_pair", choices=["per_pair", "once"],
                            help="BUMP AUC positives: each pair's reference (BUMP, default) or each reference once.")
        parser.add_argument("--include-incomplete", action="store_true",
                            help="Let metrics whose job runs or whose coverage is partial enter the comparisons.")
        parser.add_argument(
            "--aggregation", default="majority", choices=["majority", "dawid_skene", "mace", "glad"],
            help="How sentence labels are aggregated into FRANK's summary scores (default: majority, as in FRANK).",
        )
        parser.add_argument("--kendall", action="store_true", help="Kendall tau-b beside Pearson and Spearman.")
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")
        parser.add_argument("--outputs", default=None, metavar="DIR",
                            help="Also write paper tables (.tex, .csv) and figures (.svg, .png) into DIR.")

    def handle(self, *args, **options):
        report_options = {
            "split": options["split"], "dataset": options["dataset"], "system": options["system"],
            "partial": not options["no_partial"], "spearman": options["spearman"], "auc_references": options["auc_references"],
            "include_incomplete": options["include_incomplete"], "aggregation": options["aggregation"], "kendall": options["kendall"],
        }
        try:
            report = get_or_compute_report(options["campaign"], **report_options)
            if options["outputs"]:
                self.write_outputs(Path(options["outputs"]), report, report_options)
        except ReportError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, sort_keys=False))
            return
        self.stdout.write(self.render_text(report))

    def write_outputs(self, directory: Path, report: dict, report_options: dict) -> None:
        from metrics_service import paper

        subsets = {}
        if not report_options["dataset"]:
            for dataset in sorted(report.get("error_distribution_by_dataset") or {}):
                subsets[paper.DATASET_LABELS.get(dataset, dataset)] = get_or_compute_report(
                    report["campaign"], **{**report_options, "dataset": dataset})
        frame, metrics = paper.analysis_frame(report["campaign"], report_options)
        compared = [m for m in metrics if m not in (report.get("excluded_metrics") or {})]
        written = paper.write_outputs(directory, report, frame, compared, subsets=subsets)
        self.stderr.write(f"wrote {len(written)} files to {directory}: " + ", ".join(p.name for p in written))

    def render_text(self, report: dict) -> str:
        opts = report["options"]
        filters = ", ".join(f"{k}={v}" for k, v in opts.items() if k in ("split", "dataset", "system") and v)
        out = [f"Campaign {report['campaign']} ({report['kind']}, {report['status']}); {filters}", ""]
        counts = list(report["counts"].items())
        out.append(table(["count", "value", "count", "value"], [
            [counts[i][0], counts[i][1], *(counts[i + 1] if i + 1 < len(counts) else ("", ""))] for i in range(0, len(counts), 2)
        ]))
        for section in report.get("sections") or []:
            agreement = section["agreement"]
            out += ["", section["title"], table(["count", "value"], [[name, value] for name, value in section["counts"].items()])]
            if agreement["statistic"]:
                out.append(f"Agreement ({agreement['statistic']}): {_fmt(agreement['value'])}")
        out += ["", "Definitions"]
        for name, text in report["definitions"].items():
            out += wrap(f"- {name}: {text}")
        out += self.render_agreement(report.get("agreement"))
        if report["error_distribution"]:
            codes = [k for k in next(iter(report["error_distribution"].values())) if k not in ("incorrect", "n")]
            rows = [[s, v["n"], v["incorrect"], *[v[c] for c in codes]] for s, v in report["error_distribution"].items()]
            out += ["", "Share of summaries with an error", table(["system", "n", "incorrect", *codes], rows)]
        out += self.render_correlations(report)
        out += self.render_williams(report.get("williams"))
        out += self.render_ablation(report.get("ablation"))
        out += self.render_pairs(report)
        out += self.render_balanced_accuracy(report.get("balanced_accuracy"))
        out += self.render_aggrefact(report)
        out += self.render_metrics(report.get("metrics"))
        missing = {m: v for m, v in (report.get("missing_scores") or {}).items() if any(v.values())}
        if missing:
            kinds = sorted({k for v in missing.values() for k in v})
            rows = [[m, *[v.get(k, 0) for k in kinds]] for m, v in missing.items()]
            out += ["", "Missing scores (skipped by the statistics)", table(["metric", *kinds], rows)]
        sections = [k for k in ("agreement", "correlations", "meta_evaluation", "balanced_accuracy") if report[k] is None]
        if sections:
            out += ["", "No data for: " + ", ".join(sections)]
        return "\n".join(out) + "\n"

    @staticmethod
    def render_agreement(agreement: dict | None) -> list[str]:
        if not agreement:
            return []
        rows = []
        for name in ("factual", "category"):
            section = agreement.get(name)
            if section:
                rows.append([name, section["fleiss_kappa"], section["krippendorff_alpha"], section["majority_agreement"], section["n_sentences"]])
        out = ["", "Agreement", table(["labels", "fleiss_kappa", "kripp_alpha", "majority", "sentences"], rows)]
        if agreement.get("expert"):
            out.append(f"crowd vs expert: Cohen's kappa {_fmt(agreement['expert']['cohen_kappa'])} (n={agreement['expert']['n']})")
        return out

    @staticmethod
    def render_correlations(report: dict) -> list[str]:
        correlations = report["correlations"]
        if not correlations:
            return []
        partial = "partial " if any(v["partial"] for v in correlations.values()) else ""
        rows = [
            [m, v["n"], "" if v.get("status", "complete") == "complete" else v["status"], v["pearson"], _ci(v.get("pearson_ci")),
             _p(v["pearson_p"]), v["spearman"], _ci(v.get("spearman_ci")), _p(v["spearman_p"])]
            for m, v in correlations.items()
        ]
        out = ["", f"Metric vs human factuality ({partial}correlation; 95% CI Fisher z, bootstrap in --json)",
               table(["metric", "n", "status", "pearson", "95% CI", "p", "spearman", "95% CI", "p"], rows)]
        excluded = report.get("excluded_metrics")
        if excluded:
            out += wrap("Excluded from comparisons (job running or partial coverage; --include-incomplete to compare): "
                        + ", ".join(f"{m} ({s})" for m, s in excluded.items()))
        return out

    @staticmethod
    def render_williams(williams: dict | None) -> list[str]:
        """Williams test p-values, row metric correlates more with humans than column metric (FRANK Table 4)."""
        if not williams:
            return []
        metrics = list(williams)
        rows = [[a, *[("" if a == b else _p(williams[a].get(b))) for b in metrics]] for a in metrics]
        legend = ", ".join(f"M{i + 1}={m}" for i, m in enumerate(metrics))
        return ["", "Williams test: one-sided p that the row metric correlates more with humans than column M#",
                *wrap(legend), table(["metric", *[f"M{i + 1}" for i in range(len(metrics))]], rows)]

    @staticmethod
    def render_ablation(ablation: dict | None) -> list[str]:
        """Drop in correlation when one category or group is flipped to "no error" (FRANK Figure 5)."""
        if not ablation:
            return []
        first = next(iter(ablation.values()))
        names = [*first["by_group"], *first["by_category"]]
        short = [n.replace("_Errors", "").replace("Semantic_Frame", "SemFrame").replace("Content_Verifiability", "ContVer") for n in names]
        rows = [[m, v["base"], *[{**v["by_group"], **v["by_category"]}.get(n) for n in names]] for m, v in ablation.items()]
        return ["", "Ablation: drop in Pearson correlation when a category (or group) is flipped to no error",
                table(["metric", "base", *short], rows)]

    @staticmethod
    def render_pairs(report: dict) -> list[str]:
        """Consistency / ROC AUC overall with intervals, per error type with counts, best-vs-second tests."""
        meta = report.get("meta_evaluation")
        if not meta:
            return []
        significance = report.get("meta_evaluation_significance") or {}
        rows = [[m, v["n_pairs"], v["consistency"], _ci(v.get("consistency_ci")), v["roc_auc"], _ci(v.get("roc_auc_ci"))] for m, v in meta.items()]
        out = ["", "Minimal pairs (BUMP Tables 3-4, all pairs)", table(["metric", "pairs", "consistency", "95% CI", "roc_auc", "95% CI"], rows)]
        first = next(iter(meta.values()))
        row_names = [*first["by_error_type"], *first["by_kind"]]
        counts = report.get("meta_evaluation_counts") or {}
        metrics = list(meta)
        legend = ", ".join(f"M{i + 1}={m}" for i, m in enumerate(metrics))
        for stat, title in (("consistency", "Consistency"), ("roc_auc", "ROC AUC")):
            matrix = []
            for name in row_names:
                cells = []
                for m in metrics:
                    entry = meta[m]["by_error_type"].get(name) or meta[m]["by_kind"].get(name) or {}
                    cells.append(_fmt(entry.get(stat)))
                matrix.append([f"{name} (n={counts.get(name, '?')})", *cells])
            out += ["", f"{title} by error type (n = pairs of the type)", *wrap(legend),
                    table(["error type", *[f"M{i + 1}" for i in range(len(metrics))]], matrix)]
        sig_rows = []
        for name in ["all", *row_names]:
            for stat in ("consistency", "roc_auc"):
                best = (significance.get(name) or {}).get(stat)
                if best:
                    sig_rows.append([name, stat, f"{best['best']} > {best['second']}", best.get("p_value_text") or _p(best["p_value"]), best["n_pairs"]])
        if sig_rows:
            out += ["", "Best vs second metric per row (consistency: paired permutation; roc_auc: paired bootstrap)",
                    table(["row", "statistic", "best > second", "p", "pairs"], sig_rows)]
        return out

    @staticmethod
    def render_balanced_accuracy(bacc: dict | None) -> list[str]:
        if not bacc:
            return []
        datasets = sorted({d for v in bacc.values() for d in (v["per_dataset"] or {})})
        rows = []
        for metric, entry in bacc.items():
            row = [metric]
            for ds in datasets:
                cell = (entry["per_dataset"] or {}).get(ds) or {}
                row += [cell.get("balanced_accuracy"), _ci([cell["ci_low"], cell["ci_high"]]) if cell.get("ci_low") is not None else "-"]
            single = (entry["single_threshold"] or {}).get("all") or {}
            row += [single.get("balanced_accuracy"), _ci([single["ci_low"], single["ci_high"]]) if single.get("ci_low") is not None else "-"]
            rows.append(row)
        headers = ["metric"]
        for ds in datasets:
            headers += [f"{ds}", "95% CI"]
        headers += ["pooled thr.", "95% CI"]
        return ["", *wrap("Balanced accuracy on the test split: threshold per dataset (AggreFact) first; pooled = one single "
                         "threshold over all datasets (it also rewards dataset score differences)"),
                table(headers, rows)]

    @staticmethod
    def render_aggrefact(report: dict) -> list[str]:
        """Unified error types, recall per type, system-level correlations, bootstrap differences, Holm."""
        out: list[str] = []
        section = report.get("unified_taxonomy")
        if section:
            short = {"intrinsic_np": "intr-NP", "intrinsic_predicate": "intr-pred", "extrinsic_np": "extr-NP",
                     "extrinsic_predicate": "extr-pred", "entire_sentence": "entire"}
            rows = []
            for key in ("by_system_category", "by_dataset"):
                for value, entry in (section.get(key) or {}).items():
                    rows.append([value, entry["n_typed"], *[entry[t] for t in section["types"]]])
            corpora = section.get("corpora", "all")
            out += ["", *wrap("Unified error types (AggreFact): share of typed incorrect summaries, per system category and dataset"),
                    *wrap(f"Types from {section.get('rule', 'the judgements')}; corpora: "
                          f"{corpora if isinstance(corpora, str) else ', '.join(corpora)}."),
                    table(["group", "typed", *[short[t] for t in section["types"]]], rows)]
        recall = report.get("detector_recall")
        if recall:
            types = ["intrinsic_np", "intrinsic_predicate", "extrinsic_np", "extrinsic_predicate", "entire_sentence", "all_errors"]
            rows = []
            for metric, per_dataset in recall.items():
                for dataset, cells in per_dataset.items():
                    rows.append([f"{metric} {dataset}", *[cells[t]["recall"] for t in types]])
            out += ["", *wrap("Recall per unified error type at the tuned per-dataset threshold (AggreFact Table 5)"),
                    table(["metric dataset", "intr-NP", "intr-pred", "extr-NP", "extr-pred", "entire", "all"], rows)]
        system_level = report.get("system_level_correlations")
        if system_level:
            rows = [[m, v["n"], v["pearson"], _p(v["pearson_p"]), v["spearman"], _p(v["spearman_p"]), v["kendall"], _p(v["kendall_p"])]
                    for m, v in system_level.items()]
            out += ["", *wrap("System-level correlation (means per system and dataset)"),
                    table(["metric", "systems", "pearson", "p", "spearman", "p", "kendall", "p"], rows)]
        holm = report.get("correlations_holm")
        if holm:
            rows = [[m, _p(v.get("pearson_p")), _p(v.get("spearman_p")), _p(v.get("kendall_p"))] for m, v in holm.items()]
            out += ["", *wrap("Holm-adjusted p-values of the correlations (family: all metrics)"),
                    table(["metric", "pearson p", "spearman p", "kendall p"], rows)]
        differences = report.get("correlation_differences")
        if differences:
            rows = []
            williams, williams_holm = report.get("williams") or {}, report.get("williams_holm") or {}
            metrics = list(differences)
            for i, a in enumerate(metrics):
                for b in metrics[i + 1:]:
                    cell = differences[a][b]
                    rows.append([f"{a} - {b}", cell["difference"], _ci(cell["ci"]), _p((williams.get(a) or {}).get(b)),
                                 _p((williams_holm.get(a) or {}).get(b))])
            out += ["", *wrap("Correlation differences: paired bootstrap 95% CI beside Williams (one-sided p, Holm-adjusted)"),
                    table(["row - column", "diff", "95% CI", "williams p", "holm p"], rows)]
        by_type = report.get("pairs_by_unified_type")
        if by_type:
            types = ["intrinsic_np", "intrinsic_predicate", "extrinsic_np", "extrinsic_predicate"]
            first = next(iter(by_type.values()))
            rows = [[m, *[v[t]["consistency"] for t in types]] for m, v in by_type.items()]
            out += ["", *wrap("Minimal-pair consistency per unified error type (pairs: "
                              + ", ".join(f"{t} {first[t]['n_pairs']}" for t in types) + ")"),
                    table(["metric", "intr-NP", "intr-pred", "extr-NP", "extr-pred"], rows)]
        benchmark = report.get("benchmark_balanced_accuracy")
        if benchmark:
            datasets = sorted({d for v in benchmark.values() for d in v["per_dataset"]})
            rows = []
            for metric, entry in benchmark.items():
                cells = [((entry["per_dataset"].get(d) or {}).get("fixed_threshold") or {}).get("balanced_accuracy") for d in datasets]
                rows.append([metric, *cells, entry["average_fixed"], entry["average_dev_tuned"]])
            out += ["", *wrap("Balanced accuracy per source dataset (LLM-AggreFact: supported when score > 0.5; average over datasets)"),
                    table(["metric", *datasets, "avg", "avg dev-tuned"], rows)]
        return out

    @staticmethod
    def render_metrics(metrics: dict | None) -> list[str]:
        """Each metric's source, status, coverage and configuration (not just its hash)."""
        if not metrics:
            return []
        out = ["", "Metrics"]
        for name, info in metrics.items():
            coverage = f"human-rated {info.get('n_human_rated', 0)}/{info.get('of_human_rated', 0)}"
            if info.get("of_pair_members"):
                coverage += f", pair members {info['n_pair_members']}/{info['of_pair_members']}"
            line = f"- {name}: {info['source']}, {info.get('status', 'complete')}, {coverage}"
            if info.get("implementation"):
                line += f"; {info['implementation']} ({info.get('library')} {info.get('version') or '?'})"
            config = info.get("config")
            if config:
                line += "; config " + ", ".join(f"{k}={v}" for k, v in sorted(config.items()))
            job = info.get("job")
            if job:
                line += f"; job {job['job_id']} {job['status']} created {job['created_at']} finished {job['finished_at'] or '-'}"
            line += f"; key {info['config_key']}"
            out += wrap(line)
        return out
