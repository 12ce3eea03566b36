"""The bag-of-graphs model: molecule GNN -> attention across the bag -> set encoder -> heads.

Coefficient-blind by construction: the encoder reads atoms, bonds and the SCALE-FREE multiplicity features
(``mol_feat``) only. The ``naive`` model adds a head that sees raw coefficients (``mol_raw``) and classifies
output coefficients directly -- the ablation that shows what the exact algebra buys out of distribution.
The network is built from a :class:`~.gnn_config.BagGNNConfig`, one typed part per stage (encoder, bag mixer, set
encoder, heads); every checkpoint stores it (``meta.model_config``) and :meth:`BagGNNConfig.from_meta` reads it
back, older checkpoints' flat ``meta.hparams`` included. Parameter names are those of the flat-dict era, so every
checkpoint loads unchanged.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import torch
from torch import nn

from ..algebra.roles import ROLE_NU
from .blocks import BAG_MIXERS, SET_ENCODERS, ConvStack, mlp, scatter
from .gnn_config import BagGNNConfig, setting_defaults
from .product_evidence import N_PRODUCT_FEATURES, product_evidence

# Defaults of the settings a run config's model section names, flat (the YAML schema must agree with them).
DEFAULTS: dict[str, Any] = setting_defaults()
CHARGE_SHIFT = 2


class BagGNN(nn.Module):
    # state a start checkpoint may lack (train.init_from): zero identity rows leave its function unchanged
    fresh_state_prefixes = ("ident_emb.", "ident_keys", "ident_mult", "ident_struct", "struct_proj.")
    # state with one row per by-product: a fine-tune that extends the vocabulary (model.vocab_extend) keeps the start
    # model's rows first and adds its own after them
    grown_state_rows = ("extra_head.3.", "extra_comp")

    def __init__(self, config: BagGNNConfig, extra_comp: torch.Tensor | None = None) -> None:
        super().__init__()
        if not isinstance(config, BagGNNConfig):
            raise TypeError(f"BagGNN needs a BagGNNConfig, got {type(config).__name__}")
        self.config = cfg = copy.deepcopy(config)
        sizes, enc, H, p = cfg.sizes, cfg.encoder, cfg.hidden, cfg.dropout
        # Modules are created in the order of the flat-dict era (same initial weights for a seed).
        # fast_train / cheap: the blocks' training-mode fast path (packed attention rows, cheap dropout masks:
        # models/blocks.py); eval-mode maths, and so every prediction, are the same with or without it.
        self.elem = nn.Embedding(sizes.n_elements, H)
        self.x_proj = nn.Linear(sizes.x_dim, H)
        self.convs = ConvStack(enc.conv, H, enc.layers, sizes.edge_dim, cfg.attention_heads, p, fast_train=True)
        mixer, sets = cfg.bag_mixer, cfg.set_encoder
        self.bag_mixer = BAG_MIXERS[mixer.kind](H, mixer.layers, cfg.attention_heads, p, fast_train=True)
        self.pool = nn.Linear(2 * H, H)
        self.mult = nn.Linear(sizes.n_mult, H)
        self.set_enc = SET_ENCODERS[sets.kind](H, sets.layers, cfg.attention_heads, p, fast_train=True)
        self.role_head = mlp(H, H, sizes.n_roles, p, cheap=True)
        self.extra_head = mlp(2 * H, H, sizes.n_extra, p, cheap=True)
        self.ext_head = mlp(sizes.n_extent_features + 2 * H, H, 1, p, cheap=True)
        # Structured leftover head: one slot per (bag, element present in the bag) plus H and the net charge;
        # each slot classifies the element's count in the product-side leftover (the artificial chain).
        self.left_head = mlp(5 * H + 2, H, cfg.heads.left_classes, p, cheap=True)
        self.comp_proj = nn.Linear(sizes.comp_dim * 2, H) if enc.mol_comp_features else None
        self.prod_proj = nn.Linear(N_PRODUCT_FEATURES, H) if enc.product_features else None
        self.naive = cfg.naive
        if self.naive:
            self.raw = nn.Linear(sizes.n_raw, H)
            self.coef_head = mlp(2 * H, H, sizes.n_coef_classes, p, cheap=True)
            self.newcoef_head = mlp(3 * H, H, sizes.n_coef_classes, p, cheap=True)
        comp = extra_comp if extra_comp is not None else torch.zeros(sizes.n_extra, sizes.comp_dim)
        self.register_buffer("extra_comp", comp.float().clone())
        self.h_index, self.charge_index = sizes.h_index, sizes.charge_index
        self.register_buffer("role_nu", torch.tensor(ROLE_NU, dtype=torch.float)[: sizes.n_roles])
        n_ident = enc.identity_vocab
        self.ident_emb: nn.Embedding | None = None
        if n_ident:
            self.ident_emb = nn.Embedding(n_ident + 1, H)  # row 0: unknown (or dropped) molecule
            nn.init.zeros_(self.ident_emb.weight)
            self.register_buffer("ident_keys", torch.zeros(n_ident, dtype=torch.long))
            self.register_buffer("ident_mult", composition_key_multipliers(sizes.comp_dim))
        n_bits = enc.structure_bits
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
        p = self.config.encoder.identity_dropout
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
        if self.config.encoder.mult_features:
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
        if self.config.heads.leftover == "elements":
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
        C = self.config.sizes.comp_dim
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


def build_model(config: BagGNNConfig, extra_comp: torch.Tensor | None = None) -> BagGNN:
    """The network of ``config``; ``extra_comp``: the by-product vocabulary's compositions (zeros without)."""
    return BagGNN(config, extra_comp)
