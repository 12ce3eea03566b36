"""Run a trained bag GNN on examples and decode exact, balanced target lines (plus the naive ablation).

What is covered: roles of every input molecule (reactant / reagent / product already present), by-products and
leftover chains from the training vocabulary, the main product's FORMULA as the exact composition remainder,
the extent (Type 1: read off; Type 2: exact Bayes rule, or the learned scorer), output = source + xi * nu.
NOT covered yet (separate issue): new product GRAPHS in SMILES mode. There the main product is emitted only when
its composition matches a vocabulary molecule; otherwise the line is written without it and the JSON output
lists it under ``not_covered``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Batch

from ..chem.bag import Term, format_bag
from ..chem.molecule import composition
from ..data.dataset import BagExample, ExtraVocab, to_data, vocab_compositions
from ..data.featurize import ROLE_NU, Featurizer
from ..models.gnn import build_model, model_hparams
from ..training.checkpoint import load_checkpoint
from .decode import Decoded, decode_bag

ROLE_NAMES = {-2: "reactant", -1: "reactant", 0: "reagent", 1: "product", 2: "product"}


def kbest_assignments(logp: torch.Tensor, k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The k most likely joint assignments of independent per-row categorical choices (beam over rows)."""
    beams: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    for row in logp.tolist():
        cand = [(s + lp, a + (j,)) for s, a in beams for j, lp in enumerate(row)]
        beams = heapq.nlargest(k, cand, key=lambda t: t[0])
    return beams


class Predictor:
    def __init__(
        self,
        model: torch.nn.Module,
        feat: Featurizer,
        vocab: ExtraVocab,
        vtype: int,
        device: torch.device | str = "cpu",
    ) -> None:
        self.model = model.to(device).eval()
        self.feat = feat
        self.vocab = vocab
        self.vtype = vtype
        self.device = torch.device(device)
        self.repr = feat.repr
        self.naive = getattr(model, "naive", False)
        self.learned_extent = model.hp.get("extent") == "learned"
        self._comp_cache: dict[str, Any] = {}
        self.balance_beam = 4
        self.comp_lookup: dict[tuple, str] = {}
        for s in vocab.items[1:]:
            self.comp_lookup.setdefault(tuple(sorted(self._comp(s).items())), s)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_checkpoint(cls, path: str, device: str | torch.device = "cpu") -> Predictor:
        ck = load_checkpoint(path, map_location="cpu")
        fz = ck["featurizer"]
        feat = Featurizer(fz["repr"])
        vocab = ExtraVocab(fz["vocab"][1:])
        hp = ck["meta"]["hparams"]
        model = build_model(hp, vocab_compositions(vocab, feat))
        model.load_state_dict(ck["model"])
        return cls(model, feat, vocab, int(ck["meta"]["vtype"]), device)

    @classmethod
    def build(cls, cfg_model: dict, feat: Featurizer, vocab: ExtraVocab, vtype: int) -> Predictor:
        hp = model_hparams(cfg_model, feat.settings(), len(vocab))
        return cls(build_model(hp, vocab_compositions(vocab, feat)), feat, vocab, vtype)

    def _comp(self, m: str):
        c = self._comp_cache.get(m)
        if c is None:
            c = self._comp_cache[m] = composition(m, self.repr)
        return c

    # ----------------------------------------------------------------- running
    @torch.no_grad()
    def forward(self, data_list: Sequence[Any]) -> list[dict[str, Any]]:
        batch = Batch.from_data_list(list(data_list)).to(self.device)
        out = self.model(batch)
        role_p = out["role_logits"].float().softmax(-1).cpu()
        extra_p = out["extra_logits"].float().sigmoid().cpu()
        res = []
        mol_ptr = torch.cumsum(torch.tensor([0] + [d.num_mols for d in data_list]), 0)
        for i in range(len(data_list)):
            a, b = int(mol_ptr[i]), int(mol_ptr[i + 1])
            r = {"role_p": role_p[a:b], "extra_p": extra_p[i], "bag": out["bag"][i : i + 1].float()}
            if self.naive:
                r["coef"] = out["coef_logits"][a:b].argmax(-1).cpu().tolist()
                r["newcoef"] = int(out["newcoef_logits"][i].argmax())
            res.append(r)
        return res

    def decode_one(self, ex: BagExample, r: dict[str, Any], beam: int = 1) -> dict[str, Any]:
        extras = [self.vocab.items[j] for j in range(1, len(self.vocab)) if float(r["extra_p"][j]) > 0.5]
        comps = {m: self._comp(m) for m in [*ex.mols, *extras]}
        scorer = None
        if self.learned_extent and ex.vtype == 2:
            bag = r["bag"]

            def scorer(cands: list[int], feats: list[list[float]]) -> list[float]:
                f = torch.tensor(feats, dtype=torch.float, device=self.device)
                with torch.no_grad():
                    return self.model.score_extents(bag.expand(len(cands), -1), f).float().cpu().tolist()

        logp = torch.log(r["role_p"].clamp(min=1e-12))
        hyps = kbest_assignments(logp, max(beam, self.balance_beam))
        ranked = sorted(extras, key=lambda e: -float(r["extra_p"][self.vocab.index[e]]))
        decs: list[tuple[float, Decoded]] = []
        for score, assign in hyps:
            nu = {m: ROLE_NU[j] for m, j in zip(ex.mols, assign, strict=False)}
            # Drop the least confident by-products until the remainder is a valid composition.
            for keep in range(len(ranked), -1, -1):
                d = decode_bag(
                    ex.terms,
                    nu,
                    ranked[:keep],
                    comps,
                    self.repr,
                    ex.vtype,
                    ex.cset,
                    comp_lookup=self.comp_lookup,
                    extent_scorer=scorer,
                )
                if d.balanced:
                    break
            decs.append((score, d))
        # Top-1 = the most likely hypothesis whose decoding is balanced (exact algebra), if any.
        order = sorted(range(len(decs)), key=lambda i: (not decs[i][1].balanced, i))
        decs = [decs[i] for i in order][: max(beam, 1)]
        best = decs[0][1]
        terms = best.terms
        if self.naive:
            terms = self._naive_terms(ex, r, best)
        conf = r["role_p"].max(-1).values.tolist()
        return {
            "prediction": format_bag(terms),
            "molecules": [
                {
                    "mol": m,
                    "role": ROLE_NAMES[ROLE_NU[int(j)]],
                    "nu": ROLE_NU[int(j)],
                    "confidence": round(c, 4),
                }
                for m, j, c in zip(ex.mols, r["role_p"].argmax(-1).tolist(), conf, strict=False)
            ],
            "by_products": {e: round(float(r["extra_p"][self.vocab.index[e]]), 4) for e in extras},
            "new_products": [m for m, _ in best.new_products],
            "main_product": best.main_product,
            "extent": best.xi,
            "extent_candidates": best.candidates,
            "extent_posterior": [round(p, 4) for p in best.posterior],
            "balanced": best.balanced and not self.naive,
            "not_covered": best.uncovered,
            "beam": [{"prediction": format_bag(d.terms), "logp": round(s, 4)} for s, d in decs],
        }

    def _naive_terms(self, ex: BagExample, r: dict[str, Any], best: Decoded) -> list[Term]:
        out = [Term(int(k), m) for m, k in zip(ex.mols, r["coef"], strict=False) if k > 0]
        return out + [Term(int(r["newcoef"]), m) for m, _ in best.new_products if r["newcoef"] > 0]

    def predict(
        self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1
    ) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            data = [to_data(ex, self.feat, self.vocab, i) for i, ex in enumerate(chunk)]
            for ex, r in zip(chunk, self.forward(data), strict=False):
                results.append(self.decode_one(ex, r, beam))
        return results

    def predict_data(
        self, examples: Sequence[BagExample], data: Sequence[Any], batch_size: int = 64
    ) -> list[str]:
        """Top-1 lines for already featurised examples (the trainer's validation)."""
        lines: list[str] = []
        for s in range(0, len(examples), batch_size):
            outs = self.forward(data[s : s + batch_size])
            lines += [
                self.decode_one(ex, r)["prediction"] for ex, r in zip(examples[s : s + batch_size], outs, strict=False)
            ]
        return lines
