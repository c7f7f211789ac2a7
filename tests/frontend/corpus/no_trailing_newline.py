last_line_without_newline = [1,
    2]