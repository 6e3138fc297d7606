package io.bloomkv.tools;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table: a header row and data rows, the first column left-aligned, the others
 * right-aligned (they hold numbers), columns separated by two spaces.
 */
final class TextTable {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    TextTable(String... header) {
        this.columns = header.length;
        rows.add(header);
    }

    TextTable row(Object... cells) {
        if (cells.length != columns) {
            throw new IllegalArgumentException("expected " + columns + " cells, got " + cells.length);
        }
        String[] r = new String[columns];
        for (int i = 0; i < columns; i++) {
            r[i] = String.valueOf(cells[i]);
        }
        rows.add(r);
        return this;
    }

    void print(PrintWriter out, String indent) {
        int[] width = new int[columns];
        for (String[] r : rows) {
            for (int i = 0; i < columns; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder(indent);
            for (int i = 0; i < columns; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                String pad = " ".repeat(width[i] - r[i].length());
                if (i == 0) {
                    line.append(r[i]).append(i == columns - 1 ? "" : pad);
                } else {
                    line.append(pad).append(r[i]);
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
