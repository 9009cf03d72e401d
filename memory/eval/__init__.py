"""`kept eval memory`: how well memory works with a given model, measured end to end.

A dataset's sessions are replayed through the real consolidation (`consolidate_pending`)
into a throwaway data folder, then each question is asked through the real chat turn
(`memory.chat.turn.answer`: MEMORY.md in the system prompt, `search_history` at hand) in a
fresh session of its own, and the answers are scored. Nothing here imitates Kept: a model
that would lose a fact in daily use loses it here, and the numbers say where.

What is measured, per question category:
- strict accuracy: the answer holds, for every keyword group, one of its strings (case and
  accents folded) and none of the question's `wrong` strings (a stale value);
- judge accuracy (with a judge model): the judge, shown the question, the gold answer and
  the answer, says yes;
- tokens, cost and time per answer.
And per persona: the share of the user's own lines (the hand-written MEMORY.md and the
/remember lines) still in the final MEMORY.md, the share of the lines consolidation added
that are grounded in what the user said, and how many sessions were saved.

Datasets: Kept's own (memory/evaldata/personas.json, shipped) or a LoCoMo file the user
downloaded (see `locomo.load_locomo` for how its categories map to Kept's).

The package, by concern: `dataset` (the typed records), `load` (reading a data file in
Kept's format), `locomo` (reading LoCoMo's), `run` (replaying a persona, asking its
questions), `score` (strict scoring, the judge, what became of memory's lines), `report`
(the records of a run and the scores per category).
"""

from memory.eval.dataset import Category, Dataset, DatasetError, Question
from memory.eval.load import SHIPPED, load_dataset
from memory.eval.report import CategoryScore, Report, nothing_answered
from memory.eval.run import cannot_answer, run_eval
from memory.eval.score import fold, strictly_right, verdict

__all__ = [
    "SHIPPED",
    "Category",
    "CategoryScore",
    "Dataset",
    "DatasetError",
    "Question",
    "Report",
    "cannot_answer",
    "fold",
    "load_dataset",
    "nothing_answered",
    "run_eval",
    "strictly_right",
    "verdict",
]
