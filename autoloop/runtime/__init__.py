"""What converted code calls, as ``al__.<name>``.

Every entry decides at run time: Python values keep plain Python semantics,
symbolic tensors stage graph control flow.
"""

from autoloop.runtime.calls import converted_call
from autoloop.runtime.composites import ref
from autoloop.runtime.control_flow import for_stmt, if_exp, if_stmt, while_stmt
from autoloop.runtime.exceptions import caught, entering_finally, raised, suppress_if, try_body
from autoloop.runtime.lists import TensorList, list_append
from autoloop.runtime.membership import in_
from autoloop.runtime.operators import and_, assert_, bind_, len_, match_subject, not_, or_, print_, range_
from autoloop.runtime.undefined import MaybeUndefined, Undefined, read, return_value

__all__ = [
    "converted_call", "for_stmt", "if_exp", "if_stmt", "while_stmt", "TensorList", "list_append",
    "and_", "assert_", "bind_", "len_", "match_subject", "not_", "or_", "print_", "range_",
    "MaybeUndefined", "Undefined", "read", "ref", "return_value",
    "caught", "entering_finally", "in_", "raised", "suppress_if", "try_body",
]
