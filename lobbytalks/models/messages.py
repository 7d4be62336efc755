"""What a validation problem pydantic finds is told, in the API's language."""

# pydantic's own messages for the checks the models declare, in the API's language; the
# placeholders are pydantic's error context. Messages of our own validators pass as they are.
VALIDATION_MESSAGES = {
    "missing": "缺少必填字段",
    "extra_forbidden": "不支持的字段",
    "string_type": "必须是字符串",
    "int_type": "必须是整数",
    "bool_type": "必须是布尔值",
    "float_type": "必须是数字",
    "list_type": "必须是数组",
    "dict_type": "必须是 JSON 对象",
    "model_type": "必须是 JSON 对象",
    "string_too_short": "至少需要 {min_length} 个字符",
    "string_too_long": "最多 {max_length} 个字符",
    "too_short": "至少 {min_length} 项",
    "too_long": "最多 {max_length} 项",
    "string_pattern_mismatch": "格式不正确，须匹配 {pattern}",  # unless PATTERN_RULES names it
    "greater_than_equal": "不能小于 {ge}",
    "less_than_equal": "不能大于 {le}",
    "greater_than": "必须大于 {gt}",
    "less_than": "必须小于 {lt}",
    "literal_error": "只能是 {expected}",
}
