"""Models: GNN encoder, set encoder, heads, decoders, the Transformer baseline."""
