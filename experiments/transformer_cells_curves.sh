#!/bin/bash
# Results curation: the per-cell validation curves (results/transformer_cells_curves.png), Transformer beside GNN,
# batch 64 reactions per step, from the rows saved in results/curves and, where present, the bench's run folders
# (runs/transformer_*, runs/gnn_local/*); rows read from a run folder are saved to results/curves too.
#   bash experiments/transformer_cells_curves.sh
set -euo pipefail
C=results/curves
args=(
 --run "F_T1_x1, train -> test_in/out|Transformer, paper tokenizer=$C/f_t1_x1_train_test_in_out_transformer_paper_tokenizer.jsonl"
 --run "F_T1_x1, train -> test_in/out|GNN=$C/f_t1_x1_train_test_in_out_gnn.jsonl"
 --run "F_T1_x1, train_cross -> test_cross|Transformer, paper tokenizer=$C/f_t1_x1_train_cross_test_cross_transformer_paper_tokenizer.jsonl"
 --run "F_T1_x1, train_cross -> test_cross|GNN=$C/f_t1_x1_train_cross_test_cross_gnn.jsonl"
 --run "F_T2_x1, train -> test_in/out|Transformer, paper tokenizer=$C/f_t2_x1_train_test_in_out_transformer_paper_tokenizer.jsonl"
)
# the other cells: the run folder while it exists, else the rows it saved here
while IFS='=' read -r spec dir rows; do
  if [ -s "$dir/metrics.jsonl" ]; then args+=(--run "$spec=$dir"); elif [ -s "$C/$rows" ]; then args+=(--run "$spec=$C/$rows"); fi
done <<'CELLS'
F_T2_x1, train -> test_in/out|GNN=runs/gnn_local/F_T2_x1/gnn_std=f_t2_x1_train_test_in_out_gnn.jsonl
F_T1_x1, train -> test_in/out|Transformer, digit tokenizer=runs/transformer_digit_F_T1_x1_standard=f_t1_x1_train_test_in_out_transformer_digit_tokenizer.jsonl
F_T2_x1, train -> test_in/out|Transformer, digit tokenizer=runs/transformer_digit_F_T2_x1_standard=f_t2_x1_train_test_in_out_transformer_digit_tokenizer.jsonl
F_T2_x1, train_cross -> test_cross|Transformer, paper tokenizer=runs/transformer_F_T2_x1_cross=f_t2_x1_train_cross_test_cross_transformer_paper_tokenizer.jsonl
F_T2_x1, train_cross -> test_cross|GNN=runs/gnn_local/F_T2_x1/gnn_cross=f_t2_x1_train_cross_test_cross_gnn.jsonl
S_T1_x1, train -> test_in/out|Transformer, paper tokenizer=runs/transformer_S_T1_x1_standard=s_t1_x1_train_test_in_out_transformer_paper_tokenizer.jsonl
S_T1_x1, train_cross -> test_cross|Transformer, paper tokenizer=runs/transformer_S_T1_x1_cross=s_t1_x1_train_cross_test_cross_transformer_paper_tokenizer.jsonl
S_T1_x1, train -> test_in/out|GNN=runs/gnn_local/S_T1_x1/gnn_std=s_t1_x1_train_test_in_out_gnn.jsonl
S_T1_x1, train -> test_in/out|Transformer, digit tokenizer=runs/transformer_digit_S_T1_x1_standard=s_t1_x1_train_test_in_out_transformer_digit_tokenizer.jsonl
S_T1_x1, train_cross -> test_cross|GNN=runs/gnn_local/S_T1_x1/gnn_std=s_t1_x1_train_cross_test_cross_gnn.jsonl
S_T2_x1, train -> test_in/out|Transformer, paper tokenizer=runs/transformer_S_T2_x1_standard=s_t2_x1_train_test_in_out_transformer_paper_tokenizer.jsonl
S_T2_x1, train -> test_in/out|GNN=runs/gnn_local/S_T2_x1/gnn_std=s_t2_x1_train_test_in_out_gnn.jsonl
S_T2_x1, train_cross -> test_cross|Transformer, paper tokenizer=runs/transformer_S_T2_x1_cross=s_t2_x1_train_cross_test_cross_transformer_paper_tokenizer.jsonl
S_T2_x1, train_cross -> test_cross|GNN=runs/gnn_local/S_T2_x1/gnn_cross=s_t2_x1_train_cross_test_cross_gnn.jsonl
S_T2_x1, train -> test_in/out|Transformer, digit tokenizer=runs/transformer_digit_S_T2_x1_standard=s_t2_x1_train_test_in_out_transformer_digit_tokenizer.jsonl
CELLS
gnnca bench curves "${args[@]}" --save-rows $C --out results/transformer_cells_curves.png \
  --title "Validation curves per cell: Transformer (solid) beside the GNN (dashed), batch 64 reactions per step"
