"""Kernel Tuner's helpers for its results, under the names its scripts import them by
(`from kernel_tuner import util`, `from kernel_tuner.util import get_config_string`), so that a
script moved to kernlab.tune_kernel by its imports keeps working on kernlab's results, which have
Kernel Tuner's shape (a list of dicts, one per point: the tunables, `time` in ms, the metrics)."""
import math

__all__ = ["get_best_config", "get_config_string"]


def get_best_config(results, objective, objective_higher_is_better=False):
    """The result (a dict) whose `objective` is the lowest (the highest with
    objective_higher_is_better). A result whose objective is missing or not a number never wins."""
    results = list(results)
    if not results:
        raise ValueError("get_best_config: no results (every point failed, or none was run)")

    def key(r):
        v = r.get(objective)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok:
            return -math.inf if objective_higher_is_better else math.inf
        return v

    return (max if objective_higher_is_better else min)(results, key=key)


def get_config_string(params, keys=None, units=None):
    """"name=value, name=value" of `params` (a dict), in its order; only `keys` if given; floats
    to three decimals; each value followed by its unit where `units` (a dict) has one."""
    items = []
    for k, v in params.items():
        if keys and k not in keys:
            continue
        text = f"{round(v, 3):.3f}" if isinstance(v, float) else str(v)
        unit = units.get(k, "") if isinstance(units, dict) else ""
        items.append(f"{k}={text}{unit}")
    return ", ".join(items)
