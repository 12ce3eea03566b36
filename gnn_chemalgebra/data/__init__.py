"""USPTO-BAL builder, ChemAlgebra augmentation and variants, PyG featurisation."""
