"""`wmcp-top bench`: drive a page's tools without an agent, measure, report v2; budgets; overhead."""

from relay_bridge.lanes.bench.gen import generate, value_for
from relay_bridge.lanes.bench.runner import BenchError, Plan, RunResult, budget_breaches, make_plan, plan_json, run_bench

__all__ = ["BenchError", "Plan", "RunResult", "budget_breaches", "generate", "make_plan", "plan_json", "run_bench", "value_for"]
