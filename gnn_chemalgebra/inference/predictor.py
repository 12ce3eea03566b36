"""Run a trained bag GNN on examples and decode exact, balanced target lines (plus the naive ablation).

What is covered: roles of every input molecule (reactant / reagent / product already present), by-products and
leftover chains from the training vocabulary, the main product's FORMULA as the exact composition remainder,
the extent (Type 1: read off; Type 2: exact Bayes rule, or the learned scorer), output = source + xi * nu.
SMILES mode with a bond-edit model attached (``edit``): the role head decides which molecules are consumed, the
edit decoder proposes the new product GRAPHS over their atoms (plus the exact leftover chain), and the algebra
does the rest. Without an edit model the main product is emitted only when its composition matches a vocabulary
molecule; otherwise the line is written without it and the JSON output lists it under ``not_covered``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Batch

from ..algebra.roles import ROLE_NU, role_name
from ..checkpoint import load_checkpoint
from ..chem.bag import Term, format_bag
from ..chem.composition import CHARGE_KEY, closed_shell_possible
from ..chem.formula import write_formula
from ..chem.molecule import composition
from ..data.dataset import BagExample, ExtraVocab, to_data, vocab_compositions
from ..data.featurize import CHARGE_INDEX, ELEMENT_VOCAB, Featurizer
from ..errors import ChemAlgebraError
from ..models.gnn import CHARGE_SHIFT, build_model, model_hparams
from .decode import Decoded, decode_bag

EVIDENCE_FLOOR = -20.0


def kbest_assignments(logp: torch.Tensor, k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The k most likely joint assignments of independent per-row categorical choices (beam over rows)."""
    beams: list[tuple[float, tuple[int, ...]]] = [(0.0, ())]
    for row in logp.tolist():
        cand = [(s + lp, a + (j,)) for s, a in beams for j, lp in enumerate(row)]
        beams = heapq.nlargest(k, cand, key=lambda t: t[0])
    return beams


def load_edit_model(path: str | None, device: str | torch.device = "cpu") -> Any:
    """The bond-edit predictor at ``path`` or the default one; ``None`` when no default exists."""
    from .edit_decode import EditPredictor, default_checkpoint

    if path is not None:
        return EditPredictor.from_checkpoint(path, device)
    ck = default_checkpoint()
    return EditPredictor.from_checkpoint(ck, device) if ck.exists() else None


class Predictor:
    def __init__(
        self,
        model: torch.nn.Module,
        feat: Featurizer,
        vocab: ExtraVocab,
        vtype: int,
        device: torch.device | str = "cpu",
        edit: Any = None,
        edit_beam: int = 5,
    ) -> None:
        self.model = model.to(device).eval()
        self.edit = edit if feat.repr == "smiles" else None  # an EditPredictor: product graphs for SMILES
        self.edit_beam = edit_beam
        self.edit_role_sets = 2  # Type 2: reactant sets decoded by the edit model before the evidence decides
        self.edit_cache: dict[tuple, list[tuple[list[str], float]]] = {}
        self.feat = feat
        self.vocab = vocab
        self.vtype = vtype
        self.device = torch.device(device)
        self.repr = feat.repr
        self.naive = getattr(model, "naive", False)
        self.learned_extent = model.hp.get("extent") == "learned"
        self._comp_cache: dict[str, Any] = {}
        self.balance_beam = 4
        # Type 2: weigh each role hypothesis by the exact likelihood of the written coefficients under the
        # generator (Bayes: network prior x generator likelihood); every hypothesis in the beam is decoded.
        self.role_evidence = True
        # Formula: a neutral main-product remainder must admit a closed-shell molecule (DBE parity)
        self.valence_check = True
        self.comp_lookup: dict[tuple, str] = {}
        for s in vocab.items[1:]:
            self.comp_lookup.setdefault(tuple(sorted(self._comp(s).items())), s)

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_checkpoint(
        cls, path: str, device: str | torch.device = "cpu", edit_checkpoint: str | None = None
    ) -> Predictor:
        """A SMILES checkpoint gets the bond-edit model of ``edit_checkpoint`` (default: ``$GNNCA_EDIT_CHECKPOINT``,
        the bundled one, or ``runs/edits_cpu/best.pt``); without any, new product graphs stay uncovered."""
        ck = load_checkpoint(path, map_location="cpu", require=("model", "featurizer", "meta"), kind="GNN (bag model)")
        fz = ck["featurizer"]
        feat = Featurizer(fz["repr"])
        vocab = ExtraVocab(fz["vocab"][1:])
        hp = ck["meta"]["hparams"]
        model = build_model(hp, vocab_compositions(vocab, feat))
        model.load_state_dict(ck["model"])
        edit = None
        if feat.repr == "smiles":
            paired = (ck.get("config") or {}).get("model", {}).get("edit_checkpoint")
            if edit_checkpoint is None and paired and Path(paired).exists():
                edit_checkpoint = paired  # the edit model this GNN was validated with
            edit = load_edit_model(edit_checkpoint, device)
        return cls(model, feat, vocab, int(ck["meta"]["vtype"]), device, edit=edit)

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
        if "left_logits" in out:
            left_lp = out["left_logits"].float().log_softmax(-1).cpu()
            left_bag, left_elem = out["left_bag"].cpu(), out["left_elem"].cpu()
        res = []
        mol_ptr = torch.cumsum(torch.tensor([0] + [d.num_mols for d in data_list]), 0)
        for i in range(len(data_list)):
            a, b = int(mol_ptr[i]), int(mol_ptr[i + 1])
            r = {"role_p": role_p[a:b], "extra_p": extra_p[i], "bag": out["bag"][i : i + 1].float()}
            if self.naive:
                r["coef"] = out["coef_logits"][a:b].argmax(-1).cpu().tolist()
                r["newcoef"] = int(out["newcoef_logits"][i].argmax())
            if "left_logits" in out:
                sel = left_bag == i
                r["left_lp"], r["left_elem"] = left_lp[sel], left_elem[sel]
            res.append(r)
        return res

    def _left_table(self) -> tuple[list[str | None], torch.Tensor]:
        """Leftover candidates from the vocabulary as count classes per composition column ([V, C])."""
        if getattr(self, "_left_tab", None) is None:
            comp = vocab_compositions(self.vocab, self.feat).round().long()
            comp[:, CHARGE_INDEX] += CHARGE_SHIFT
            names: list[str | None] = [None, *self.vocab.items[1:]]  # <unk> row = no leftover
            self._left_tab = (names, comp)
        return self._left_tab

    def leftover_candidates(self, r: dict[str, Any], k: int = 4) -> list[tuple[float, str | None]]:
        """The k most likely leftovers under the per-element count head: every vocabulary leftover scored
        jointly (sum of its per-element log-probabilities) plus the head's own arg-max composition."""
        if "left_lp" not in r:
            return []
        lp, elems = r["left_lp"], r["left_elem"]
        K = lp.size(1)
        C = self.feat.settings()["comp_dim"]
        table = torch.full((C, K), float("-inf"))
        table[:, 0] = 0.0  # an element absent from the bag cannot be in the leftover
        table[elems] = lp
        names, comp = self._left_table()
        ok = (comp < K).all(1) & (comp >= 0).all(1)
        scores = table.gather(1, comp.clamp(0, K - 1).T.contiguous()).T.sum(1) if comp.numel() else torch.zeros(0)
        scores = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
        cands: dict[str | None, float] = {}
        for j in torch.argsort(scores, descending=True)[:k].tolist():
            if scores[j] > float("-inf"):
                cands.setdefault(names[j], float(scores[j]))
        best = lp.argmax(-1)
        comp_d: dict[str, int] = {}
        for e, c in zip(elems.tolist(), best.tolist(), strict=True):
            v = int(c) - (CHARGE_SHIFT if e == CHARGE_INDEX else 0)
            if v:
                comp_d[ELEMENT_VOCAB[e]] = v
        s_best = float(lp.max(-1).values.sum())
        name: str | None = None
        if any(key != CHARGE_KEY for key in comp_d):
            if self.repr == "formula":
                try:
                    name = write_formula(comp_d)
                except ChemAlgebraError:
                    name = None
            else:
                name = self.comp_lookup.get(tuple(sorted(comp_d.items())))
        if name is not None or not comp_d:
            cands.setdefault(name, s_best)
        return sorted(cands.items(), key=lambda kv: -kv[1])[:k]

    def _acceptable(self, d: Decoded) -> bool:
        """A decoding worth stopping at: something is consumed, and it balances -- or, in SMILES mode, its only
        gap is the main product's graph (no edit model loaded), which no other hypothesis would fill either."""
        if not any(v < 0 for v in d.nu.values()):
            return False
        if d.balanced:
            return self._plausible_main(d)
        return self.repr == "smiles" and all(u.startswith("main product graph") for u in d.uncovered)

    def _plausible_main(self, d: Decoded) -> bool:
        """USPTO main products are organic and the largest new product (99.95% / 99.98% of the local training
        reactions): a hypothesis whose remainder has no carbon, or is smaller than its leftover, ranks later."""
        if d.main_product is None:
            return True
        main = self._comp(d.main_product)
        if "C" not in main:
            return False
        if self.valence_check and self.repr == "formula" and closed_shell_possible(main) is False:
            return False
        size = sum(v for k, v in main.items() if k != CHARGE_KEY)
        for m, _ in d.new_products:
            if m != d.main_product and sum(v for k, v in self._comp(m).items() if k != CHARGE_KEY) > size:
                return False
        return True

    def decode_one(self, ex: BagExample, r: dict[str, Any], beam: int = 1) -> dict[str, Any]:
        vocab_extras = [self.vocab.items[j] for j in range(1, len(self.vocab)) if float(r["extra_p"][j]) > 0.5]
        left_cands = self.leftover_candidates(r)
        left = left_cands[0][0] if left_cands else None
        if left_cands:  # structured head: (log-prob, leftover list) options
            options = [(s_, [m] if m else []) for m, s_ in left_cands]
        else:  # vocabulary head: its confident by-products, then dropping the least confident ones
            ranked = sorted(vocab_extras, key=lambda e: -float(r["extra_p"][self.vocab.index[e]]))
            options = [(0.0, ranked[:keep]) for keep in range(len(ranked), -1, -1)]
        extras = [e for _, o in options for e in o]
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
        if self.edit is not None:
            return self._report(ex, r, self._decode_with_edits(ex, hyps, beam, scorer), vocab_extras, left)
        # Joint search: role hypotheses x leftover options, most likely first; keep balanced decodings.
        combos = sorted(((rs + ls, assign, o) for rs, assign in hyps for ls, o in options), key=lambda t: -t[0])
        decs: list[tuple[float, Decoded]] = []
        n_bal = 0
        weigh = self._weigh_evidence(ex)
        for score, assign, ex_try in combos:
            nu = {m: ROLE_NU[j] for m, j in zip(ex.mols, assign, strict=False)}
            d = decode_bag(
                ex.terms,
                nu,
                ex_try,
                comps,
                self.repr,
                ex.vtype,
                ex.cset,
                comp_lookup=self.comp_lookup,
                extent_scorer=scorer,
            )
            decs.append((score + self._evidence(d) if weigh else score, d))
            n_bal += self._acceptable(d)
            if n_bal >= max(beam, 1) and not weigh:
                break
        # Top-1 = the most likely hypothesis whose decoding is balanced (exact algebra), if any.
        # (a decoding that consumes nothing -- no reaction at all -- ranks after every reacting one)
        order = sorted(
            range(len(decs)),
            key=lambda i: (not self._acceptable(decs[i][1]), not decs[i][1].balanced, -decs[i][0] if weigh else i),
        )
        decs = [decs[i] for i in order][: max(beam, 1)]
        return self._report(ex, r, decs, vocab_extras, left)

    def _report(
        self, ex: BagExample, r: dict[str, Any], decs: list[tuple[float, Decoded]], vocab_extras: list, left: Any
    ) -> dict[str, Any]:
        best = decs[0][1]
        if not best.balanced:  # every written line balances: without a balanced hypothesis, no reaction
            best = self._no_reaction(ex, "no balanced hypothesis (" + "; ".join(best.uncovered) + ")")
        terms = best.terms
        if self.naive:
            terms = self._naive_terms(ex, r, best)
        conf = r["role_p"].max(-1).values.tolist()
        return {
            "prediction": format_bag(terms),
            "molecules": [
                {
                    "mol": m,
                    "role": role_name(ROLE_NU[int(j)]),
                    "nu": ROLE_NU[int(j)],
                    "confidence": round(c, 4),
                }
                for m, j, c in zip(ex.mols, r["role_p"].argmax(-1).tolist(), conf, strict=False)
            ],
            "by_products": {e: round(float(r["extra_p"][self.vocab.index[e]]), 4) for e in vocab_extras},
            "leftover": left,
            "new_products": [m for m, _ in best.new_products],
            "nu": dict(best.nu),
            "main_product": best.main_product,
            "extent": best.xi,
            "extent_candidates": best.candidates,
            "extent_posterior": [round(p, 4) for p in best.posterior],
            "balanced": best.balanced and not self.naive,
            "not_covered": best.uncovered,
            "beam": [
                {"prediction": format_bag(d.terms), "logp": round(s, 4), "main_product": d.main_product}
                for s, d in decs
            ],
        }

    def _weigh_evidence(self, ex: BagExample) -> bool:
        return self.role_evidence and ex.vtype == 2

    def _evidence(self, d: Decoded) -> float:
        """The generator's log-likelihood of the source under a hypothesis, floored so that a confident network
        can still overrule a hypothesis the coefficients contradict (the rebuilt term layout may be off)."""
        return max(d.log_evidence, EVIDENCE_FLOOR)

    # ----------------------------------------------------------------- SMILES product graphs
    @staticmethod
    def _consumed(ex: BagExample, assign: Sequence[int]) -> tuple[dict[str, int], list[str], list[str]]:
        """Role hypothesis -> (nu of the consumed molecules only, reactants with multiplicity, reagents)."""
        nu = {m: min(ROLE_NU[j], 0) for m, j in zip(ex.mols, assign, strict=True)}
        reactants = [m for m in ex.mols for _ in range(-nu[m])]
        return nu, reactants, [m for m in ex.mols if nu[m] == 0]

    def edit_products(self, bags: Sequence[tuple[list[str], list[str]]]) -> list[list[tuple[list[str], float]]]:
        """Ranked new-product sets (input copies kept: the algebra counts them as products already present)."""
        from .smiles_products import new_products_for_bags

        return new_products_for_bags(
            bags, self.edit_beam, checkpoint=self.edit, drop_input_copies=False, cache=self.edit_cache
        )

    def _decode_with_edits(
        self, ex: BagExample, hyps: list[tuple[float, tuple[int, ...]]], beam: int, scorer: Any
    ) -> list[tuple[float, Decoded]]:
        """Role hypotheses (most likely first) x the edit decoder's product sets; the score adds both
        log-probabilities. Stops at the first hypothesis that yields a balanced, plausible decoding."""
        decs: list[tuple[float, Decoded]] = []
        weigh = self._weigh_evidence(ex)
        seen: set[tuple[str, ...]] = set()
        for rs, assign in hyps:
            nu, reactants, reagents = self._consumed(ex, assign)
            if not reactants or tuple(reactants) in seen:
                continue
            seen.add(tuple(reactants))
            for prods, es in self.edit_products([(reactants, reagents)])[0]:
                comps = {m: self._comp(m) for m in [*ex.mols, *prods]}
                d = decode_bag(ex.terms, nu, prods, comps, self.repr, ex.vtype, ex.cset, extent_scorer=scorer)
                d.main_product = self._main_of([m for m in prods if m not in ex.mols])
                decs.append((rs + es + (self._evidence(d) if weigh else 0.0), d))
            # Type 1: the first reactant set with an acceptable decoding (further beam entries come from its
            # other product sets); Type 2: ``edit_role_sets`` reactant sets, weighed by the evidence.
            if any(self._acceptable(d) for _, d in decs) and len(seen) >= (self.edit_role_sets if weigh else 1):
                break
        if not decs:
            decs.append((float("-inf"), self._no_reaction(ex, "no product graph from the edit model")))
        order = sorted(range(len(decs)), key=lambda i: (not self._acceptable(decs[i][1]), -decs[i][0]))
        return [decs[i] for i in order][: max(beam, 1)]

    def _no_reaction(self, ex: BagExample, why: str) -> Decoded:
        """The source copied unchanged (nothing consumed): balanced, and reported under ``not_covered``."""
        d = decode_bag(ex.terms, {}, [], {m: self._comp(m) for m in ex.mols}, self.repr, ex.vtype, ex.cset)
        d.uncovered = [why]
        return d

    def _main_of(self, new: Sequence[str]) -> str | None:
        """The main product among new molecules: most atoms, then the smallest string (as the labels)."""
        return min(new, key=lambda m: (-sum(v for k, v in self._comp(m).items() if k != CHARGE_KEY), m), default=None)

    def warm_edit_cache(self, examples: Sequence[BagExample], outs: Sequence[dict[str, Any]]) -> None:
        """One batched edit-model pass over the reactant sets :meth:`_decode_with_edits` will ask for first."""
        bags = []
        for ex, r in zip(examples, outs, strict=True):
            want = self.edit_role_sets if self._weigh_evidence(ex) else 1
            sets: list[tuple[list[str], list[str]]] = []
            for _, assign in kbest_assignments(torch.log(r["role_p"].clamp(min=1e-12)), self.balance_beam):
                _, reactants, reagents = self._consumed(ex, assign)
                if reactants and all(reactants != s_[0] for s_ in sets):
                    sets.append((reactants, reagents))
                if len(sets) >= want:
                    break
            bags += sets
        if bags:
            self.edit_products(bags)

    def _naive_terms(self, ex: BagExample, r: dict[str, Any], best: Decoded) -> list[Term]:
        out = [Term(int(k), m) for m, k in zip(ex.mols, r["coef"], strict=False) if k > 0]
        return out + [Term(int(r["newcoef"]), m) for m, _ in best.new_products if r["newcoef"] > 0]

    def predict(self, examples: Sequence[BagExample], batch_size: int = 64, beam: int = 1) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []
        for s in range(0, len(examples), batch_size):
            chunk = examples[s : s + batch_size]
            data = [to_data(ex, self.feat, self.vocab, i, labels=False) for i, ex in enumerate(chunk)]
            outs = self.forward(data)
            if self.edit is not None:
                self.warm_edit_cache(chunk, outs)
            for ex, r in zip(chunk, outs, strict=False):
                results.append(self.decode_one(ex, r, beam))
        return results

    def predict_data(self, examples: Sequence[BagExample], data: Sequence[Any], batch_size: int = 64) -> list[str]:
        """Top-1 lines for already featurised examples (the trainer's validation)."""
        lines: list[str] = []
        for s in range(0, len(examples), batch_size):
            outs = self.forward(data[s : s + batch_size])
            if self.edit is not None:
                self.warm_edit_cache(examples[s : s + batch_size], outs)
            lines += [
                self.decode_one(ex, r)["prediction"] for ex, r in zip(examples[s : s + batch_size], outs, strict=False)
            ]
        return lines
