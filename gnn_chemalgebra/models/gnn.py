"""The bag-of-graphs model: molecule GNN -> attention across the bag -> set encoder -> heads.

Coefficient-blind by construction: the encoder reads atoms, bonds and the SCALE-FREE multiplicity features
(``mol_feat``) only. The ``naive`` model adds a head that sees raw coefficients (``mol_raw``) and classifies
output coefficients directly -- the ablation that shows what the exact algebra buys out of distribution.
Hyper-parameters live in one plain dict (saved with every checkpoint); :func:`build_model` rebuilds from it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch
from torch import nn

from ..algebra.roles import ROLE_NU
from ..data.featurize import N_COEF_CLASSES, N_EXTENT_FEATURES
from .blocks import BAG_MIXERS, SET_ENCODERS, ConvStack, mlp, scatter
from .product_evidence import N_PRODUCT_FEATURES, product_evidence

MODEL_NAMES = ("gnn", "naive")

DEFAULTS: dict[str, Any] = {
    "name": "gnn",
    "conv": "gine",
    "hidden": 128,
    "layers": 3,
    "heads": 4,
    "dropout": 0.1,
    "bag_mixer": "transformer",
    "bag_layers": 1,
    "set_encoder": "transformer",
    "set_layers": 2,
    "extent": "bayes",  # "bayes" (exact rule, default) or "learned"
    "leftover": "elements",  # "elements" (per-element count head) or "vocab" (by-product vocabulary only)
    "left_classes": 6,  # leftover count classes per element (0..K-1; the charge is shifted by CHARGE_SHIFT)
    "mol_comp_features": True,  # molecule-level composition features (log counts) in the molecule embedding
    # Scale-free multiplicity features (rank, ties, minimum) in the molecule embedding. False: every learned
    # decision is blind to the coefficient PATTERN too, so the Type-1 and Type-2 lines of one reaction (and a
    # user's own amounts) read alike and the coefficients act only through the exact Type-2 evidence.
    "mult_features": True,
    # Composition evidence that a molecule is made from others / makes another (models/product_evidence.py):
    # a product already in the source is what the reactants make, and points at them.
    "product_features": False,
    # Molecule identity: a learned vector per composition seen in enough training lines (``identity_vocab`` of
    # them, keys in the ``ident_keys`` buffer), added to every node of the molecule. A formula names a molecule
    # that reappears across reactions (95% of test_in formulas occur in training): the vector lets the network
    # remember what it did there (an acyl chloride loses HCl) instead of re-deriving it from element counts.
    # Zero-initialised, so a model fine-tuned from one without it starts as that model. ``identity_vocab`` is
    # not a setting: the trainer counts it from ``model.identity_min_count`` (0 or absent = no identity rows).
    "identity_dropout": 0.1,  # training: share of molecules read as unknown, so unseen ones stay usable
    # Structure rows (formula models with identity rows): the Morgan count fingerprint (this many bits) of the
    # structure the SMILES training lines wrote for each identity composition (data/structures.py), through a
    # zero-initialised linear map added to the identity vector. Unlike the vector it is shared across molecules:
    # what the network learns of an acyl chloride's group transfers to every molecule that has one. 0 = off.
    "structure_bits": 0,
}
CHARGE_SHIFT = 2


def model_hparams(model_cfg: dict[str, Any], featurizer: dict[str, Any], n_extra: int) -> dict[str, Any]:
    hp = {**DEFAULTS, **{k: v for k, v in model_cfg.items() if k in DEFAULTS}}
    if hp["name"] not in MODEL_NAMES:
        raise ValueError(f"unknown GNN model name {hp['name']!r} (choose from {MODEL_NAMES})")
    hp.update(
        x_dim=featurizer["x_dim"],
        edge_dim=featurizer["edge_dim"],
        n_elements=featurizer["n_elements"],
        comp_dim=featurizer["comp_dim"],
        n_mult=featurizer["n_mult_features"],
        n_raw=featurizer["n_raw_coef"],
        n_roles=len(featurizer["role_nu"]),
        n_extra=n_extra,
        n_coef_classes=N_COEF_CLASSES,
        n_extent_features=N_EXTENT_FEATURES,
        h_index=featurizer.get("h_index", 0),
        charge_index=featurizer.get("charge_index", 1),
    )
    return hp


class BagGNN(nn.Module):
    # state a start checkpoint may lack (train.init_from): zero identity rows leave its function unchanged
    fresh_state_prefixes = ("ident_emb.", "ident_keys", "ident_mult", "ident_struct", "struct_proj.")

    def __init__(self, hp: dict[str, Any], extra_comp: torch.Tensor | None = None) -> None:
        super().__init__()
        self.hp = dict(hp)
        H, p = hp["hidden"], hp["dropout"]
        # fast_train / cheap: the blocks' training-mode fast path (packed attention rows, cheap dropout masks:
        # models/blocks.py); eval-mode maths, and so every prediction, are the same with or without it.
        self.elem = nn.Embedding(hp["n_elements"], H)
        self.x_proj = nn.Linear(hp["x_dim"], H)
        self.convs = ConvStack(hp["conv"], H, hp["layers"], hp["edge_dim"], hp["heads"], p, fast_train=True)
        self.bag_mixer = BAG_MIXERS[hp["bag_mixer"]](H, hp["bag_layers"], hp["heads"], p, fast_train=True)
        self.pool = nn.Linear(2 * H, H)
        self.mult = nn.Linear(hp["n_mult"], H)
        self.set_enc = SET_ENCODERS[hp["set_encoder"]](H, hp["set_layers"], hp["heads"], p, fast_train=True)
        self.role_head = mlp(H, H, hp["n_roles"], p, cheap=True)
        self.extra_head = mlp(2 * H, H, hp["n_extra"], p, cheap=True)
        self.ext_head = mlp(hp["n_extent_features"] + 2 * H, H, 1, p, cheap=True)
        # Structured leftover head: one slot per (bag, element present in the bag) plus H and the net charge;
        # each slot classifies the element's count in the product-side leftover (the artificial chain).
        self.left_head = mlp(5 * H + 2, H, hp.get("left_classes", 6), p, cheap=True)
        self.comp_proj = nn.Linear(hp["comp_dim"] * 2, H) if hp.get("mol_comp_features", False) else None
        self.prod_proj = nn.Linear(N_PRODUCT_FEATURES, H) if hp.get("product_features", False) else None
        self.naive = hp["name"] == "naive"
        if self.naive:
            self.raw = nn.Linear(hp["n_raw"], H)
            self.coef_head = mlp(2 * H, H, hp["n_coef_classes"], p, cheap=True)
            self.newcoef_head = mlp(3 * H, H, hp["n_coef_classes"], p, cheap=True)
        comp = extra_comp if extra_comp is not None else torch.zeros(hp["n_extra"], hp["comp_dim"])
        self.register_buffer("extra_comp", comp.float().clone())
        self.h_index, self.charge_index = int(hp.get("h_index", 0)), int(hp.get("charge_index", 1))
        self.register_buffer("role_nu", torch.tensor(ROLE_NU, dtype=torch.float)[: hp["n_roles"]])
        n_ident = int(hp.get("identity_vocab", 0))
        self.ident_emb: nn.Embedding | None = None
        if n_ident:
            self.ident_emb = nn.Embedding(n_ident + 1, H)  # row 0: unknown (or dropped) molecule
            nn.init.zeros_(self.ident_emb.weight)
            self.register_buffer("ident_keys", torch.zeros(n_ident, dtype=torch.long))
            self.register_buffer("ident_mult", composition_key_multipliers(hp["comp_dim"]))
        n_bits = int(hp.get("structure_bits", 0))
        self.struct_proj: nn.Linear | None = None
        if n_ident and n_bits:
            self.register_buffer("ident_struct", torch.zeros(n_ident + 1, n_bits, dtype=torch.uint8))
            self.struct_proj = nn.Linear(n_bits, H)
            nn.init.zeros_(self.struct_proj.weight)
            nn.init.zeros_(self.struct_proj.bias)

    def set_identity_keys(self, keys: torch.Tensor) -> None:
        """The sorted composition keys (:func:`composition_keys`) the identity rows 1.. stand for."""
        if self.ident_emb is None or keys.numel() != self.ident_keys.numel():
            raise ValueError("identity keys do not match the model's identity_vocab")
        self.ident_keys.copy_(torch.sort(keys.long()).values)

    def set_structures(self, rows: torch.Tensor) -> None:
        """Fingerprint counts per identity row (row 0, the unknown molecule, stays zero)."""
        if self.struct_proj is None or tuple(rows.shape) != tuple(self.ident_struct.shape):
            raise ValueError("structure rows do not match the model's identity_vocab and structure_bits")
        self.ident_struct.copy_(rows.to(torch.uint8))
        self.ident_struct[0].zero_()

    def identity(self, mol_comp: torch.Tensor) -> torch.Tensor:
        """Identity row per molecule: 1 + the rank of its composition key, 0 when unseen (or dropped); plus its
        structure's fingerprint, mapped, when the model has structure rows."""
        keys = composition_keys(mol_comp, self.ident_mult)
        pos = torch.searchsorted(self.ident_keys, keys).clamp(max=self.ident_keys.numel() - 1)
        idx = torch.where(self.ident_keys[pos] == keys, pos + 1, torch.zeros_like(pos))
        p = float(self.hp.get("identity_dropout", 0.0))
        if self.training and p > 0:
            idx = idx * (torch.rand(idx.shape, device=idx.device) >= p).long()
        vec = self.ident_emb(idx)
        if self.struct_proj is not None:
            vec = vec + self.struct_proj(torch.log1p(self.ident_struct[idx].float()))
        return vec

    def forward(self, batch: Any) -> dict[str, torch.Tensor]:
        B = int(batch.num_graphs)
        M = batch.mol_feat.size(0)
        h = self.elem(batch.z) + self.x_proj(batch.x)
        if self.ident_emb is not None:
            h = h + self.identity(batch.mol_comp)[batch.atom2mol].to(h.dtype)
        h = self.convs(h, batch.edge_index, batch.edge_attr)
        h = self.bag_mixer(h, batch.batch, B)
        mean = scatter(h, batch.atom2mol, dim=0, dim_size=M, reduce="mean")
        mx = scatter(h, batch.atom2mol, dim=0, dim_size=M, reduce="max")
        mol = self.pool(torch.cat([mean, mx], -1))
        if self.hp.get("mult_features", True):
            mol = mol + self.mult(batch.mol_feat)
        if self.prod_proj is not None:
            ev = product_evidence(batch.mol_comp, batch.mol_graph, B, self.charge_index)
            mol = mol + self.prod_proj(ev.to(mol.dtype))
        if self.comp_proj is not None:
            comp = batch.mol_comp.float()
            bag_comp = scatter(comp.abs(), batch.mol_graph, dim=0, dim_size=B, reduce="sum")[batch.mol_graph]
            shared = ((bag_comp - comp.abs()) > 0).float() * (comp.abs() > 0).float()  # element elsewhere too
            mol = mol + self.comp_proj(torch.cat([torch.sign(comp) * torch.log1p(comp.abs()), shared], -1))
        mol = self.set_enc(mol, batch.mol_graph, B)
        bag = torch.cat(
            [
                scatter(mol, batch.mol_graph, dim=0, dim_size=B, reduce="mean"),
                scatter(mol, batch.mol_graph, dim=0, dim_size=B, reduce="max"),
            ],
            -1,
        )
        role_logits = self.role_head(mol)
        out = {"role_logits": role_logits, "extra_logits": self.extra_head(bag), "bag": bag}
        if self.hp.get("leftover", "vocab") == "elements":
            out.update(self.leftover_slots(h, batch, role_logits, bag, B))
        ext_feat = getattr(batch, "ext_feat", None)
        if ext_feat is not None and ext_feat.numel():
            out["ext_scores"] = self.score_extents(bag[batch.ext_graph], ext_feat)
        if self.naive:
            raw = self.raw(batch.mol_raw)
            out["coef_logits"] = self.coef_head(torch.cat([mol, raw], -1))
            raw_bag = scatter(raw, batch.mol_graph, dim=0, dim_size=B, reduce="mean")
            out["newcoef_logits"] = self.newcoef_head(torch.cat([bag, raw_bag], -1))
        return out

    def leftover_slots(
        self, h: torch.Tensor, batch: Any, role_logits: torch.Tensor, bag: torch.Tensor, B: int
    ) -> dict[str, torch.Tensor]:
        """Slots = unique (bag, element) pairs over the bag's nodes, plus H and charge for every bag.

        Each slot sees the element's embedding, mean/max of its nodes, the mean of its nodes weighted by the
        (detached) probability that their molecule is consumed, the bag embedding, and two counts: the
        expected number of that element among consumed molecules and among all molecules (log scale; counts
        inside molecules, never coefficients)."""
        C = self.hp["comp_dim"]
        node_key = batch.batch * C + batch.z
        ar = torch.arange(B, device=h.device)
        extra_key = torch.cat([ar * C + self.h_index, ar * C + self.charge_index])
        keys, inv = torch.unique(torch.cat([node_key, extra_key]), return_inverse=True)
        S = keys.numel()
        node_inv = inv[: node_key.numel()]
        p_react = (role_logits.detach().float().softmax(-1) * (self.role_nu < 0).float()).sum(-1)  # [M]
        w = p_react[batch.atom2mol].to(h.dtype)[:, None]
        mean = scatter(h, node_inv, dim=0, dim_size=S, reduce="mean")
        mx = scatter(h, node_inv, dim=0, dim_size=S, reduce="max")
        wsum = scatter(w, node_inv, dim=0, dim_size=S, reduce="sum")
        mean_w = scatter(h * w, node_inv, dim=0, dim_size=S, reduce="sum") / wsum.clamp(min=1e-6)
        slot_bag = torch.div(keys, C, rounding_mode="floor")
        slot_elem = keys - slot_bag * C
        comp = batch.mol_comp.float().abs()
        react_comp = scatter(comp * p_react[:, None], batch.mol_graph, dim=0, dim_size=B, reduce="sum")
        all_comp = scatter(comp, batch.mol_graph, dim=0, dim_size=B, reduce="sum")
        counts = torch.stack(
            [torch.log1p(react_comp[slot_bag, slot_elem]), torch.log1p(all_comp[slot_bag, slot_elem])], -1
        ).to(h.dtype)
        if self.training:  # the same function, the bag's columns of the first layer applied once per bag
            rows = torch.cat([mean + self.elem(slot_elem), mx, mean_w, counts], -1)
            return {"left_logits": _head_with_bag_columns(self.left_head, rows, bag, slot_bag, 3 * h.size(-1)),
                    "left_bag": slot_bag, "left_elem": slot_elem}  # fmt: skip
        feats = torch.cat([mean + self.elem(slot_elem), mx, mean_w, bag[slot_bag], counts], -1)
        return {"left_logits": self.left_head(feats), "left_bag": slot_bag, "left_elem": slot_elem}

    def score_extents(self, bag_rows: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        return self.ext_head(torch.cat([feats.to(bag_rows.dtype), bag_rows], -1)).squeeze(-1)


def _head_with_bag_columns(head: nn.Sequential, rows: torch.Tensor, bag: torch.Tensor, slot_bag: torch.Tensor,
                           at: int) -> torch.Tensor:  # fmt: skip
    """``head(cat([rows[:, :at], bag[slot_bag], rows[:, at:]], -1))`` with the bag's block of the first layer's
    weight applied to the ``B`` bag rows and then gathered, instead of to every slot's copy of them (a bag has ~7
    leftover slots, so that block was ~2/5 of the head's multiplications). Training path only: the sums are the
    same terms grouped differently, so the rounding differs from the eval path's single product."""
    lin = head[0]
    width = bag.size(-1)
    w_rows = torch.cat([lin.weight[:, :at], lin.weight[:, at + width :]], 1)
    pre = torch.addmm(lin.bias, rows, w_rows.t())
    pre = pre + torch.nn.functional.linear(bag, lin.weight[:, at : at + width]).index_select(0, slot_bag)
    return head[1:](pre)


def composition_key_multipliers(comp_dim: int) -> torch.Tensor:
    """Fixed pseudo-random 31-bit multipliers (from sha256 of the column index, so the same in every process and
    version): one int64 key per composition, exact on any device."""
    digests = (hashlib.sha256(f"identity column {j}".encode()).digest() for j in range(comp_dim))
    return torch.tensor([1 + int.from_bytes(d[:4], "big") % (2**31 - 2) for d in digests], dtype=torch.long)


def composition_keys(comp: torch.Tensor, mult: torch.Tensor) -> torch.Tensor:
    """One int64 per composition row (element counts and charge are small integers: no overflow, and two
    different compositions share a key only if their difference is orthogonal to the random multipliers)."""
    return (torch.round(comp.float()).long() * mult).sum(-1)


def build_model(hp: dict[str, Any], extra_comp: torch.Tensor | None = None) -> BagGNN:
    return BagGNN(hp, extra_comp)
