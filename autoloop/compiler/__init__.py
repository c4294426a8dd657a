"""The compiler: plain Python functions in, converted Python functions out.

Pure AST work with `gast`; nothing here imports tensors, numpy or graphs.
`conversion.convert(fn)` runs the pipeline; `api` holds the public names
(`to_code`, `to_graph`, `do_not_convert`, `set_loop_options`).
"""
