"""Several trained bag GNNs read as one model at prediction time.

Independent runs disagree on a good share of the lines they miss (two F_T1_x1 models, 82.2 and 80.7 validation EM
alone, are right one or the other on 85.4% of the lines), so averaging their heads can buy accuracy with
checkpoints already trained; a much weaker member pulls a strong one down, measured (experiments/studies.md,
"Longer, restarted and averaged runs"). The ensemble returns the outputs of one :class:`~.gnn.BagGNN` (same keys,
same shapes), so the runner and the decoder read it unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

_FLOOR = -1e4  # log-probability of a count class a member does not have (a padded column)


class BagEnsemble(nn.Module):
    """Members' role and leftover heads averaged as log-probabilities (a renormalised geometric mean, which the
    runner's softmax restores); by-product logits averaged when the members share one vocabulary, else the first
    member's. The bag embedding (read by a learned extent scorer) and the leftover slot layout are the first
    member's: slots depend on the input bag only, so every member has the same ones. Inference only."""

    def __init__(self, members: list[nn.Module], same_vocab: bool) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one model")
        if any(getattr(m, "naive", False) for m in members):
            raise ValueError("the raw-coefficient ablation (naive) cannot be ensembled: its heads are not averaged")
        self.members = nn.ModuleList(members)
        self.same_vocab = same_vocab
        self.config = members[0].config
        self.naive = False

    def forward(self, batch: Any) -> dict[str, torch.Tensor]:
        outs = [m(batch) for m in self.members]
        first = outs[0]
        out = {
            "role_logits": _mean_log_softmax([o["role_logits"] for o in outs]),
            "extra_logits": torch.stack([o["extra_logits"].float() for o in outs]).mean(0)
            if self.same_vocab
            else first["extra_logits"],
            "bag": first["bag"],
        }
        left = [o for o in outs if "left_logits" in o]
        if left:
            out["left_logits"] = _mean_log_softmax([o["left_logits"] for o in left])
            out["left_bag"], out["left_elem"] = left[0]["left_bag"], left[0]["left_elem"]
        return out

    def score_extents(self, bag: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """The first member's learned extent scores: ``bag`` is its embedding, which the others do not read."""
        return self.members[0].score_extents(bag, feats)


def _mean_log_softmax(logits: list[torch.Tensor]) -> torch.Tensor:
    """Mean of the members' log-probabilities over the last axis; members with fewer classes count the missing
    ones as (almost) impossible."""
    k = max(t.size(-1) for t in logits)
    rows = []
    for t in logits:
        lp = F.log_softmax(t.float(), -1)
        if lp.size(-1) < k:
            lp = F.pad(lp, (0, k - lp.size(-1)), value=_FLOOR)
        rows.append(lp)
    return torch.stack(rows).mean(0)
