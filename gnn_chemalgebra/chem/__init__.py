"""Chemistry core: bags, canonical SMILES, compositions, formulas, the leftover-chain rule. No torch here."""
