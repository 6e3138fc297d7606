package io.bloomkv.tools;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table: a header row and data rows, columns separated by two spaces. The first
 * column is left-aligned, the others right-aligned (they hold numbers) unless
 * {@link #leftAligned(int...)} says otherwise.
 */
final class TextTable {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;
    private final boolean[] left;
    private boolean printHeader = true;

    TextTable(String... header) {
        this.columns = header.length;
        for (int i = 0; i < header.length; i++) {
            header[i] = header[i] == null ? "" : header[i];
        }
        this.left = new boolean[header.length];
        this.left[0] = true;
        rows.add(header);
    }

    /** A table of {@code columns} columns whose header row is not printed (label/value lists). */
    static TextTable headless(int columns) {
        TextTable t = new TextTable(new String[columns]);
        t.printHeader = false;
        return t;
    }

    /** Left-aligns the given columns (text rather than numbers). */
    TextTable leftAligned(int... cols) {
        for (int c : cols) {
            left[c] = true;
        }
        return this;
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
        for (String[] r : printHeader ? rows : rows.subList(1, rows.size())) {
            StringBuilder line = new StringBuilder(indent);
            for (int i = 0; i < columns; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                String pad = " ".repeat(width[i] - r[i].length());
                if (left[i]) {
                    line.append(r[i]).append(pad);
                } else {
                    line.append(pad).append(r[i]);
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
