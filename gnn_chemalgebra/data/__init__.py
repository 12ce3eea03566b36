"""USPTO-BAL builder, ChemAlgebra augmentation and variants, featurisation and batching of bags."""
