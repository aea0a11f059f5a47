#!/usr/bin/env python3
"""Writes the elf_symbols seeds into tests/fuzz/corpus/elf_symbols/: the smallest 64-bit ELF
shared objects whose .dynsym defines (or only references) example_sgemm_ukernel, and broken
ones. Run from the repository root: python3 tests/fuzz/seed_sources/elf_symbols/make_seeds.py"""
import struct

OUT = "tests/fuzz/corpus/elf_symbols/"
SYMBOL = b"example_sgemm_ukernel"


def elf(shndx=1, sym_type=2, shoff_delta=0, entsize=24):
    dynstr = b"\0" + SYMBOL + b"\0"
    dynstr += b"\0" * (-len(dynstr) % 8)
    str_off = 64
    sym_off = str_off + len(dynstr)
    # Elf64_Sym: st_name, st_info (binding << 4 | type), st_other, st_shndx, st_value, st_size.
    dynsym = b"\0" * 24 + struct.pack("<IBBHQQ", 1, (1 << 4) | sym_type, 0, shndx, 0x1000, 64)
    sh_off = sym_off + len(dynsym)
    # Elf64_Shdr: name, type, flags, addr, offset, size, link, info, addralign, entsize.
    null = b"\0" * 64
    strtab = struct.pack("<IIQQQQIIQQ", 0, 3, 2, 0, str_off, len(dynstr), 0, 0, 1, 0)
    symtab = struct.pack("<IIQQQQIIQQ", 0, 11, 2, 0, sym_off, len(dynsym), 1, 1, 8, entsize)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    # Elf64_Ehdr after e_ident: type (ET_DYN), machine (x86-64), version, entry, phoff, shoff,
    # flags, ehsize, phentsize, phnum, shentsize, shnum, shstrndx.
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, sh_off + shoff_delta, 0, 64,
                                 0, 0, 64, 3, 0)
    return header + dynstr + dynsym + null + strtab + symtab


seeds = {
    "defines_symbol": elf(),
    "undefined_symbol": elf(shndx=0),
    "object_not_function": elf(sym_type=1),
    "bad_entsize": elf(entsize=16),
    "misaligned_sections": elf(shoff_delta=4) + b"\0" * 8,
    "truncated_header": elf()[:40],
    "not_elf": b"plain text, not ELF\n",
}
for name, data in seeds.items():
    with open(OUT + name, "wb") as f:
        f.write(data)
