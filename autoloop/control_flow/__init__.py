"""Graph control flow and composite values: while_loop, cond, scan, TensorArray, SparseTensor, IndexedSlices."""
