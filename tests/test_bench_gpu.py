"""``bench/gpu.py --cpu-smoke``: the GPU check's tiny-model parts run on the CPU in CI, so the script
a GPU machine runs is known to work before one is at hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.timeout(1200)  # its subprocess alone may take the default 900 s
def test_gpu_check_runs_its_cpu_parts(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "gpu.py"), "--cpu-smoke", "--items", "4", "--out", str(out)],
                   check=True, capture_output=True, timeout=900)
    figures = json.loads(out.read_text())
    assert figures["device"] == "cpu" and figures["model"]["num_hidden_layers"] == 4
    assert figures["tree_vs_plain"]["max_nat_per_token"] < 1e-4 and figures["tree_vs_plain"]["greedy_agreement"] == 1
    assert figures["continuous_equals_fixed"] is True and figures["constrained_in_choices"] is True
    back_off = figures["oom_back_off"]
    assert back_off["refused_batches"] > 0 and back_off["max_nat_per_token"] < 1e-4
    assert figures["scored_tokens_per_s"] > 0 and figures["generated_tokens_per_s"] > 0
    assert "errors" not in figures  # every guarded check ran through
    # Study-scale workloads at smoke size: 4 BLiMP-length pairs, 4 items of 4 choices, 2 traces to 16 tokens.
    assert figures["study_blimp"]["requests"] == 8 and figures["study_choices"]["requests"] == 16
    assert figures["study_long_generation"]["generated_tokens"] <= 2 * 16
    # The same traces with the static (slot) cache, timed beside the dynamic one.
    assert figures["study_long_generation"]["static_equals_dynamic"] is True
    assert figures["study_long_generation"]["static_over_dynamic"] > 0
    assert all(figures[f"study_{w}"]["forward_tokens_per_s"] > 0 for w in ("blimp", "choices", "long_generation"))
    # The scored workloads packed beside padded: the same log-probs; each check's seconds, to plan a lease.
    assert all(figures[f"study_{w}"]["packed_max_gap_per_token"] < 1e-4 for w in ("blimp", "choices"))
    assert set(figures["check_seconds"]) >= {"tree_vs_plain", "float32_truth", "study_blimp", "study_long_generation"}
    for kind in ("fixed", "calibrated"):  # the same weights in float32 as the truth, with lingdiag's fragile marks
        truth = figures[f"bf16_vs_fp32_nli_{kind}"]
        assert truth["decisions"] == 4 * 2 and {"flips", "fragile", "flips_not_fragile", "max_abs_gap"} <= truth.keys()
        assert figures[f"bf16_vs_fp32_sentences_{kind}"]["decisions"] == 4
    assert figures["calibration"]["per_token"] >= figures["calibration"]["worst"] > 0
    for path in ("tree", "plain"):  # packed passes: no padding, the padded passes' log-probs
        packed = figures[f"packed_{path}"]
        assert packed["padding_share"] == 0 and packed["max_nat_per_token"] < 1e-5 and packed["greedy_agreement"] == 1


def test_a_failing_check_keeps_the_figures_of_the_others(tmp_path: Path) -> None:
    """Issue 39: the figures were written only at the end, so one crash lost every check that had passed."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from gpu import Figures
    finally:
        sys.path.remove(str(REPO / "bench"))
    out = tmp_path / "gpu.json"
    figures = Figures(out, device="cpu")
    figures.guard("first", lambda: {"a": 1})
    figures.guard("broken", lambda: {"b": 1 // 0})
    broken = "ZeroDivisionError: integer division or modulo by zero"
    written = json.loads(out.read_text())
    seconds = written.pop("check_seconds")  # what each check cost, the failed one too
    assert written == {"device": "cpu", "a": 1, "errors": {"broken": broken}}
    assert set(seconds) == {"first", "broken"} and all(s >= 0 for s in seconds.values())
    figures.guard("after", lambda: {"c": 3})
    assert json.loads(out.read_text())["c"] == 3


def test_gpu_check_without_cuda_says_so_in_one_line() -> None:
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu.py")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip() == "bench/gpu.py: no CUDA device here (run with --cpu-smoke for the CPU parts)"


@pytest.mark.slow
def test_gpu_profile_runs_on_the_cpu(tmp_path: Path) -> None:
    """``bench/gpu_profile.py``, the one-lease profile, at the tiny model's size: every lever ran, none failed."""
    from lingdiag.models.embedded import ensure_converted

    out = tmp_path / "profile.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "gpu_profile.py"), str(ensure_converted("smollm2-135m")[0]),
                    str(out)], check=True, capture_output=True, timeout=600)
    figures = json.loads(out.read_text())
    for lever in ("tree", "packed", "plain", "max_batch_1024", "plain_max_batch_1024"):
        assert isinstance(figures[lever], dict) and figures[lever]["forward_tokens"] > 0, lever
    assert figures["packed"]["forward_tokens"] == figures["tree"]["forward_tokens"]  # packing drops padding only
    assert "scaled_dot_product_attention" in figures["torch_profile_cpu"] or "aten::" in figures["torch_profile_cpu"]
    assert figures["study_long_generation"]["static_equals_dynamic"] is True


@pytest.mark.slow  # the SmolLM2 tokenizer's directory comes from converting the embedded model
def test_plan_only_keeps_every_workload_within_its_target(tmp_path: Path) -> None:
    """Issue 63: ``--plan-only`` (no card, no weights) plans each workload at the 8B shape on an H200's memory;
    the plan the work model chooses computes at most 1.15× each request's own work on every study workload.
    Smaller than the study (the planning is Python), the same shapes: the ratio is per token."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import study_scale
        from gpu import H200_BYTES, plan_only
    finally:
        sys.path.remove(str(REPO / "bench"))
    out = tmp_path / "plan.json"
    figures = plan_only(None, study_scale.Scale(pairs=1500, items=200, prompts=16, new_tokens=256), 40, H200_BYTES,
                        out)
    assert json.loads(out.read_text()) == figures and "errors" not in figures
    for name in ("study_blimp", "study_choices", "study_long_generation", "nli", "sentences"):
        work = figures[name]
        assert work["planned_over_useful"] == round(work["planned_flops"] / work["useful_flops"], 4)
        assert work["planned_over_useful"] <= 1.15, name
    for name in ("study_blimp", "study_choices", "nli", "sentences"):
        plans = figures[name]
        # The choice is never more work than today's padded default, nor than a pass packed to the card's
        # memory under a dense mask (the H200's 0.35×: 8.66× the useful work at the study's 67,000 pairs).
        assert plans["chosen"]["planned_flops"] <= plans["default"]["planned_flops"]
        assert plans["chosen"]["planned_flops"] <= plans["packed_dense_to_budget"]["planned_flops"]
        assert plans["chosen"]["syncs"] <= plans["default"]["syncs"]
    assert figures["budget_tokens"]["loglik"] > 100_000  # sized from the card's memory, as on the card


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_cards_check_runs_dry_on_the_cpu(tmp_path: Path) -> None:
    """``--lease --cpu-smoke``: the card's one command on the tiny model, up to the CUDA calls; the peak and the
    bandwidth measured first, every workload timed padded and packed (the same log-probs), the float32 truth."""
    out = tmp_path / "lease.json"
    subprocess.run([sys.executable, str(REPO / "bench" / "gpu.py"), "--lease", "--cpu-smoke", "--items", "2",
                    "--study", "2", "2", "1", "8", "--out", str(out)], check=True, capture_output=True, timeout=900)
    figures = json.loads(out.read_text())
    assert "errors" not in figures, figures.get("errors")
    assert list(figures["check_seconds"])[:2] == ["peak", "bandwidth"]
    assert figures["peak_tflops"] > 0 and figures["bandwidth_gb_s"] > 0
    for name in ("study_blimp", "study_choices", "nli", "sentences"):
        work = figures[name]
        assert work["packed_max_gap_per_token"] < 1e-4 and work["packed_padding_share"] == 0
        # HFLM beside it at fixed batches: its ``auto`` search needs CUDA's out-of-memory error (on the CPU
        # its first try took 24 GiB and the kernel killed the check).
        assert set(work["hflm_padded_seconds"]) == {"64", "256"}
        assert work["padded_share_of_peak"] > 0 and any(k.startswith("packed_plan_") for k in work)
    generation = figures["study_long_generation"]
    assert generation["static_equals_dynamic"] is True and generation["dynamic_step_over_bound"] > 0
    assert figures["bf16_vs_fp32_nli_fixed"]["decisions"] == 2 * 2
