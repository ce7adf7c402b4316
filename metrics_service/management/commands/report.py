"""``manage.py report --campaign SLUG [--split all|valid|test] [--dataset cnndm|xsum] [--no-partial] [--json]``."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from metrics_service.report import ReportError, get_or_compute_report


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _table(headers: list[str], rows: list[list]) -> str:
    cells = [headers] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Print a campaign's analysis report: agreement, error distribution, metric correlations, minimal pairs."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("--split", default="all", choices=["all", "valid", "test"])
        parser.add_argument("--dataset", default=None, choices=["cnndm", "xsum", "other"])
        parser.add_argument("--system", default=None, help="Only this system's summaries.")
        parser.add_argument("--no-partial", action="store_true", help="Plain instead of partial correlations.")
        parser.add_argument(
            "--aggregation", default="majority", choices=["majority", "dawid_skene", "mace"],
            help="How sentence labels are aggregated into FRANK's summary scores (default: majority, as in FRANK).",
        )
        parser.add_argument("--json", action="store_true", help="Print one JSON object.")

    def handle(self, *args, **options):
        try:
            report = get_or_compute_report(
                options["campaign"], split=options["split"], dataset=options["dataset"],
                system=options["system"], partial=not options["no_partial"], aggregation=options["aggregation"],
            )
        except ReportError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, sort_keys=False))
            return
        self.stdout.write(self.render_text(report))

    def render_text(self, report: dict) -> str:
        out = [f"Campaign {report['campaign']} ({report['kind']}, {report['status']})", ""]
        out.append(_table(["count", "value"], [[k, v] for k, v in report["counts"].items()]))
        agreement = report["agreement"]
        if agreement:
            rows = []
            for name in ("factual", "category"):
                section = agreement.get(name)
                if section:
                    rows.append([name, section["fleiss_kappa"], section["krippendorff_alpha"], section["majority_agreement"], section["n_sentences"]])
            out += ["", "Agreement", _table(["labels", "fleiss_kappa", "kripp_alpha", "majority", "sentences"], rows)]
            if agreement.get("expert"):
                out.append(f"crowd vs expert: Cohen's kappa {_fmt(agreement['expert']['cohen_kappa'])} (n={agreement['expert']['n']})")
        if report["error_distribution"]:
            codes = [k for k in next(iter(report["error_distribution"].values())) if k not in ("incorrect", "n")]
            rows = [[s, v["n"], v["incorrect"], *[v[c] for c in codes]] for s, v in report["error_distribution"].items()]
            out += ["", "Share of summaries with an error", _table(["system", "n", "incorrect", *codes], rows)]
        if report["correlations"]:
            partial = "partial " if any(v["partial"] for v in report["correlations"].values()) else ""
            rows = [[m, v["n"], v["pearson"], v["pearson_p"], v["spearman"], v["spearman_p"]] for m, v in report["correlations"].items()]
            out += ["", f"Metric vs human factuality ({partial}correlation)", _table(["metric", "n", "pearson", "p", "spearman", "p"], rows)]
        out += self.render_williams(report.get("williams"))
        out += self.render_ablation(report.get("ablation"))
        if report["meta_evaluation"]:
            rows = [[m, v["n_pairs"], v["consistency"], v["roc_auc"]] for m, v in report["meta_evaluation"].items()]
            out += ["", "Minimal pairs", _table(["metric", "pairs", "consistency", "roc_auc"], rows)]
            out += self.render_pairs_by_type(report["meta_evaluation"], report.get("meta_evaluation_significance") or {})
        if report["balanced_accuracy"]:
            rows = []
            for metric, entry in report["balanced_accuracy"].items():
                single = entry["single_threshold"] or {}
                overall = single.get("all") or {}
                rows.append([metric, single.get("threshold"), overall.get("balanced_accuracy"), overall.get("ci_low"), overall.get("ci_high")])
            out += ["", "Balanced accuracy (single threshold, test split)", _table(["metric", "threshold", "bacc", "ci_low", "ci_high"], rows)]
        missing = {m: v for m, v in (report.get("missing_scores") or {}).items() if any(v.values())}
        if missing:
            kinds = sorted({k for v in missing.values() for k in v})
            rows = [[m, *[v.get(k, 0) for k in kinds]] for m, v in missing.items()]
            out += ["", "Missing scores (skipped by the statistics)", _table(["metric", *kinds], rows)]
        sections = [k for k in ("agreement", "correlations", "meta_evaluation", "balanced_accuracy") if report[k] is None]
        if sections:
            out += ["", "No data for: " + ", ".join(sections)]
        return "\n".join(out) + "\n"

    @staticmethod
    def render_williams(williams: dict | None) -> list[str]:
        """Williams test p-values, row metric correlates more with humans than column metric (FRANK Table 4)."""
        if not williams:
            return []
        metrics = list(williams)
        rows = [[a, *[("" if a == b else williams[a].get(b)) for b in metrics]] for a in metrics]
        return ["", "Williams test: p that the row metric correlates more with humans than the column metric",
                _table(["metric", *metrics], rows)]

    @staticmethod
    def render_ablation(ablation: dict | None) -> list[str]:
        """Drop in correlation when one category or group is flipped to "no error" (FRANK Figure 5)."""
        if not ablation:
            return []
        first = next(iter(ablation.values()))
        names = [*first["by_group"], *first["by_category"]]
        rows = [[m, v["base"], *[{**v["by_group"], **v["by_category"]}.get(n) for n in names]] for m, v in ablation.items()]
        return ["", "Ablation: drop in Pearson correlation when a category (or group) is flipped to no error",
                _table(["metric", "base", *names], rows)]

    @staticmethod
    def render_pairs_by_type(meta: dict, significance: dict) -> list[str]:
        """Consistency / ROC AUC per error type and kind, with the best-vs-second significance of each row."""
        first = next(iter(meta.values()))
        row_names = [*first["by_error_type"], *first["by_kind"]]
        if not row_names:
            return []
        metrics = list(meta)
        rows = []
        for name in row_names:
            cells = []
            for m in metrics:
                entry = meta[m]["by_error_type"].get(name) or meta[m]["by_kind"].get(name) or {}
                cells.append(f"{_fmt(entry.get('consistency'))} / {_fmt(entry.get('roc_auc'))}")
            best = (significance.get(name) or {}).get("roc_auc") or {}
            rows.append([name, *cells, f"{best['best']} > {best['second']}: p={_fmt(best['p_value'])}" if best else "-"])
        return ["", "Minimal pairs by error type (consistency / roc_auc; AUC best vs second, paired bootstrap)",
                _table(["row", *metrics, "best vs second"], rows)]
