/* ==== @@TOK  tokenizers: byte-level BPE (GPT-2, Llama-3, Qwen2 style), encode and decode ======== */
/* Holds: the Unicode classes and UTF-8 reading the pre-tokenizer needs, the pre-tokenizer patterns
   written out in C, a JSON reader for vocabulary files, the loaders (GPT-2's encoder.json +
   vocab.bpe, Hugging Face's tokenizer.json), BPE encoding with its cache, decoding.
   Calls: @@CORE (errors, allocator, sizes), @@DATA (lt_read_file). */

/* ---- @@TOK.utf8  Unicode classes and UTF-8 ----------------------------------------------------- */
#define LT__TOK_L 1    /* \p{L}: Lu Ll Lt Lm Lo */
#define LT__TOK_N 2    /* \p{N}: Nd Nl No */
#define LT__TOK_S 4    /* \s: Unicode White_Space */
#define LT__TOK_NL 8   /* \r or \n (also \s) */
#define LT__TOK_BAD 0xFFFFFFFFu   /* the "code point" of a byte that starts no valid UTF-8 sequence */

/* The classes follow a newer Unicode than the reference tokenizers' regex engines: against Hugging
   Face tokenizers' Oniguruma (tests/ref/gen_tok_tables.py --compare) 17144 code points of \p{L} and
   336 of \p{N} differ, all of them unassigned in Unicode 14 (letters and digits added since); \s is
   the same set.  Text in scripts added after the engines' Unicode version may pre-tokenize
   differently; everything assigned by Unicode 14 agrees (the tests' corpus samples every category). */
/* BEGIN lt__tok_ranges (tests/ref/gen_tok_tables.py: \p{L} = 1, \p{N} = 2; 842 ranges;
   Unicode 18.0.0, as the PyPI regex module 2026.11.19 defines them) */
static const uint32_t lt__tok_ranges[1684] = {   /* lo | class << 24, hi */
    0x2000030,0x39, 0x1000041,0x5a, 0x1000061,0x7a, 0x10000aa,0xaa, 0x20000b2,0xb3, 0x10000b5,0xb5,
    0x20000b9,0xb9, 0x10000ba,0xba, 0x20000bc,0xbe, 0x10000c0,0xd6, 0x10000d8,0xf6, 0x10000f8,0x2c1,
    0x10002c6,0x2d1, 0x10002e0,0x2e4, 0x10002ec,0x2ec, 0x10002ee,0x2ee, 0x1000370,0x374, 0x1000376,0x377,
    0x100037a,0x37d, 0x100037f,0x37f, 0x1000386,0x386, 0x1000388,0x38a, 0x100038c,0x38c, 0x100038e,0x3a1,
    0x10003a3,0x3f5, 0x10003f7,0x481, 0x100048a,0x52f, 0x1000531,0x556, 0x1000558,0x559, 0x1000560,0x588,
    0x100058b,0x58c, 0x10005d0,0x5ea, 0x10005ef,0x5f2, 0x1000620,0x64a, 0x2000660,0x669, 0x100066e,0x66f,
    0x1000671,0x6d3, 0x10006d5,0x6d5, 0x10006e5,0x6e6, 0x10006ee,0x6ef, 0x20006f0,0x6f9, 0x10006fa,0x6fc,
    0x10006ff,0x6ff, 0x1000710,0x710, 0x1000712,0x72f, 0x100074d,0x7a5, 0x10007b1,0x7b1, 0x20007c0,0x7c9,
    0x10007ca,0x7ea, 0x10007f4,0x7f5, 0x10007fa,0x7fa, 0x1000800,0x815, 0x100081a,0x81a, 0x1000824,0x824,
    0x1000828,0x828, 0x1000840,0x858, 0x1000860,0x86a, 0x1000870,0x887, 0x1000889,0x88f, 0x10008a0,0x8c9,
    0x1000904,0x939, 0x100093d,0x93d, 0x1000950,0x950, 0x1000958,0x961, 0x2000966,0x96f, 0x1000971,0x980,
    0x1000985,0x98c, 0x100098f,0x990, 0x1000993,0x9a8, 0x10009aa,0x9b0, 0x10009b2,0x9b2, 0x10009b6,0x9b9,
    0x10009bd,0x9bd, 0x10009ce,0x9ce, 0x10009dc,0x9dd, 0x10009df,0x9e1, 0x20009e6,0x9ef, 0x10009f0,0x9f1,
    0x20009f4,0x9f9, 0x10009fc,0x9fc, 0x1000a05,0xa0a, 0x1000a0f,0xa10, 0x1000a13,0xa28, 0x1000a2a,0xa30,
    0x1000a32,0xa33, 0x1000a35,0xa36, 0x1000a38,0xa39, 0x1000a59,0xa5c, 0x1000a5e,0xa5e, 0x2000a66,0xa6f,
    0x1000a72,0xa74, 0x1000a85,0xa8d, 0x1000a8f,0xa91, 0x1000a93,0xaa8, 0x1000aaa,0xab0, 0x1000ab2,0xab3,
    0x1000ab5,0xab9, 0x1000abd,0xabd, 0x1000ad0,0xad0, 0x1000ae0,0xae1, 0x2000ae6,0xaef, 0x1000af9,0xaf9,
    0x1000b05,0xb0c, 0x1000b0f,0xb10, 0x1000b13,0xb28, 0x1000b2a,0xb30, 0x1000b32,0xb33, 0x1000b35,0xb39,
    0x1000b3d,0xb3d, 0x1000b5c,0xb5d, 0x1000b5f,0xb61, 0x2000b66,0xb6f, 0x1000b71,0xb71, 0x2000b72,0xb77,
    0x1000b83,0xb83, 0x1000b85,0xb8a, 0x1000b8e,0xb90, 0x1000b92,0xb95, 0x1000b99,0xb9a, 0x1000b9c,0xb9c,
    0x1000b9e,0xb9f, 0x1000ba3,0xba4, 0x1000ba8,0xbaa, 0x1000bae,0xbb9, 0x1000bd0,0xbd0, 0x2000be6,0xbf2,
    0x1000c05,0xc0c, 0x1000c0e,0xc10, 0x1000c12,0xc28, 0x1000c2a,0xc39, 0x1000c3d,0xc3d, 0x1000c58,0xc5a,
    0x1000c5c,0xc5d, 0x1000c60,0xc61, 0x2000c66,0xc6f, 0x2000c78,0xc7e, 0x1000c80,0xc80, 0x1000c85,0xc8c,
    0x1000c8e,0xc90, 0x1000c92,0xca8, 0x1000caa,0xcb3, 0x1000cb5,0xcb9, 0x1000cbd,0xcbd, 0x1000cdc,0xcde,
    0x1000ce0,0xce1, 0x2000ce6,0xcef, 0x1000cf1,0xcf2, 0x1000d04,0xd0c, 0x1000d0e,0xd10, 0x1000d12,0xd3a,
    0x1000d3d,0xd3d, 0x1000d4e,0xd4e, 0x1000d54,0xd56, 0x2000d58,0xd5e, 0x1000d5f,0xd61, 0x2000d66,0xd78,
    0x1000d7a,0xd7f, 0x1000d85,0xd96, 0x1000d9a,0xdb1, 0x1000db3,0xdbb, 0x1000dbd,0xdbd, 0x1000dc0,0xdc6,
    0x2000de6,0xdef, 0x1000e01,0xe30, 0x1000e32,0xe33, 0x1000e40,0xe46, 0x2000e50,0xe59, 0x1000e81,0xe82,
    0x1000e84,0xe84, 0x1000e86,0xe8a, 0x1000e8c,0xea3, 0x1000ea5,0xea5, 0x1000ea7,0xeb0, 0x1000eb2,0xeb3,
    0x1000ebd,0xebd, 0x1000ec0,0xec4, 0x1000ec6,0xec6, 0x2000ed0,0xed9, 0x1000edc,0xedf, 0x1000f00,0xf00,
    0x2000f20,0xf33, 0x1000f40,0xf47, 0x1000f49,0xf6c, 0x1000f88,0xf8c, 0x1001000,0x102a, 0x100103f,0x103f,
    0x2001040,0x1049, 0x1001050,0x1055, 0x100105a,0x105d, 0x1001061,0x1061, 0x1001065,0x1066, 0x100106e,0x1070,
    0x1001075,0x1081, 0x100108e,0x108e, 0x2001090,0x1099, 0x10010a0,0x10c5, 0x10010c7,0x10c7, 0x10010cd,0x10cd,
    0x10010d0,0x10fa, 0x10010fc,0x1248, 0x100124a,0x124d, 0x1001250,0x1256, 0x1001258,0x1258, 0x100125a,0x125d,
    0x1001260,0x1288, 0x100128a,0x128d, 0x1001290,0x12b0, 0x10012b2,0x12b5, 0x10012b8,0x12be, 0x10012c0,0x12c0,
    0x10012c2,0x12c5, 0x10012c8,0x12d6, 0x10012d8,0x1310, 0x1001312,0x1315, 0x1001318,0x135a, 0x2001369,0x137c,
    0x1001380,0x138f, 0x10013a0,0x13f5, 0x10013f8,0x13fd, 0x1001401,0x166c, 0x100166f,0x167f, 0x1001681,0x169a,
    0x10016a0,0x16ea, 0x20016ee,0x16f0, 0x10016f1,0x16f8, 0x1001700,0x1711, 0x100171f,0x1731, 0x1001740,0x1751,
    0x1001760,0x176c, 0x100176e,0x1770, 0x1001780,0x17b3, 0x10017d7,0x17d7, 0x10017dc,0x17dc, 0x20017e0,0x17e9,
    0x20017f0,0x17f9, 0x2001810,0x1819, 0x1001820,0x1878, 0x1001880,0x1884, 0x1001887,0x18a8, 0x10018aa,0x18aa,
    0x10018b0,0x18f5, 0x1001900,0x191e, 0x2001946,0x194f, 0x1001950,0x196d, 0x1001970,0x1974, 0x1001980,0x19ab,
    0x10019b0,0x19c9, 0x20019d0,0x19da, 0x1001a00,0x1a16, 0x1001a20,0x1a54, 0x2001a80,0x1a89, 0x2001a90,0x1a99,
    0x1001aa7,0x1aa7, 0x1001b05,0x1b33, 0x1001b45,0x1b4c, 0x2001b50,0x1b59, 0x1001b83,0x1ba0, 0x1001bae,0x1baf,
    0x2001bb0,0x1bb9, 0x1001bba,0x1be5, 0x1001c00,0x1c23, 0x2001c40,0x1c49, 0x1001c4d,0x1c4f, 0x2001c50,0x1c59,
    0x1001c5a,0x1c7d, 0x1001c80,0x1c8a, 0x1001c90,0x1cba, 0x1001cbd,0x1cbf, 0x1001ce9,0x1cec, 0x1001cee,0x1cf3,
    0x1001cf5,0x1cf6, 0x1001cfa,0x1cfa, 0x1001d00,0x1dbf, 0x1001e00,0x1f15, 0x1001f18,0x1f1d, 0x1001f20,0x1f45,
    0x1001f48,0x1f4d, 0x1001f50,0x1f57, 0x1001f59,0x1f59, 0x1001f5b,0x1f5b, 0x1001f5d,0x1f5d, 0x1001f5f,0x1f7d,
    0x1001f80,0x1fb4, 0x1001fb6,0x1fbc, 0x1001fbe,0x1fbe, 0x1001fc2,0x1fc4, 0x1001fc6,0x1fcc, 0x1001fd0,0x1fd3,
    0x1001fd6,0x1fdb, 0x1001fe0,0x1fec, 0x1001ff2,0x1ff4, 0x1001ff6,0x1ffc, 0x2002070,0x2070, 0x1002071,0x2071,
    0x2002074,0x2079, 0x100207f,0x207f, 0x2002080,0x2089, 0x100208f,0x209f, 0x1002102,0x2102, 0x1002107,0x2107,
    0x100210a,0x2113, 0x1002115,0x2115, 0x1002119,0x211d, 0x1002124,0x2124, 0x1002126,0x2126, 0x1002128,0x2128,
    0x100212a,0x212d, 0x100212f,0x2139, 0x100213c,0x213f, 0x1002145,0x2149, 0x100214e,0x214e, 0x2002150,0x2182,
    0x1002183,0x2184, 0x2002185,0x2189, 0x2002460,0x249b, 0x20024ea,0x24ff, 0x2002776,0x2793, 0x1002c00,0x2ce4,
    0x1002ceb,0x2cee, 0x1002cf2,0x2cf3, 0x2002cfd,0x2cfd, 0x1002d00,0x2d25, 0x1002d27,0x2d27, 0x1002d2d,0x2d2d,
    0x1002d30,0x2d67, 0x1002d6f,0x2d6f, 0x1002d80,0x2d96, 0x1002da0,0x2da6, 0x1002da8,0x2dae, 0x1002db0,0x2db6,
    0x1002db8,0x2dbe, 0x1002dc0,0x2dc6, 0x1002dc8,0x2dce, 0x1002dd0,0x2dd6, 0x1002dd8,0x2dde, 0x1002e2f,0x2e2f,
    0x1003005,0x3006, 0x2003007,0x3007, 0x2003021,0x3029, 0x1003031,0x3035, 0x2003038,0x303a, 0x100303b,0x303c,
    0x1003041,0x3096, 0x100309d,0x309f, 0x10030a1,0x30fa, 0x10030fc,0x30ff, 0x1003105,0x312f, 0x1003131,0x318e,
    0x2003192,0x3195, 0x10031a0,0x31bf, 0x10031f0,0x31ff, 0x2003220,0x3229, 0x2003248,0x324f, 0x2003251,0x325f,
    0x2003280,0x3289, 0x20032b1,0x32bf, 0x1003400,0x4dbf, 0x1004e00,0xa48c, 0x100a4d0,0xa4fd, 0x100a500,0xa60c,
    0x100a610,0xa61f, 0x200a620,0xa629, 0x100a62a,0xa62b, 0x100a640,0xa66e, 0x100a67f,0xa69d, 0x100a6a0,0xa6e5,
    0x200a6e6,0xa6ef, 0x100a717,0xa71f, 0x100a722,0xa788, 0x100a78b,0xa7dd, 0x100a7e2,0xa7e2, 0x100a7f1,0xa801,
    0x100a803,0xa805, 0x100a807,0xa80a, 0x100a80c,0xa822, 0x200a830,0xa835, 0x100a840,0xa873, 0x100a882,0xa8b3,
    0x200a8d0,0xa8d9, 0x100a8f2,0xa8f7, 0x100a8fb,0xa8fb, 0x100a8fd,0xa8fe, 0x200a900,0xa909, 0x100a90a,0xa925,
    0x100a930,0xa946, 0x100a960,0xa97c, 0x100a984,0xa9b2, 0x100a9cf,0xa9cf, 0x200a9d0,0xa9d9, 0x100a9e0,0xa9e4,
    0x100a9e6,0xa9ef, 0x200a9f0,0xa9f9, 0x100a9fa,0xa9fe, 0x100aa00,0xaa28, 0x100aa40,0xaa42, 0x100aa44,0xaa4b,
    0x200aa50,0xaa59, 0x100aa60,0xaa76, 0x100aa7a,0xaa7a, 0x100aa7e,0xaaaf, 0x100aab1,0xaab1, 0x100aab5,0xaab6,
    0x100aab9,0xaabd, 0x100aac0,0xaac0, 0x100aac2,0xaac2, 0x100aadb,0xaadd, 0x100aae0,0xaaea, 0x100aaf2,0xaaf4,
    0x100ab01,0xab06, 0x100ab09,0xab0e, 0x100ab11,0xab16, 0x100ab20,0xab26, 0x100ab28,0xab2e, 0x100ab30,0xab5a,
    0x100ab5c,0xab69, 0x100ab6c,0xab6d, 0x100ab70,0xabe2, 0x200abf0,0xabf9, 0x100ac00,0xd7a3, 0x100d7b0,0xd7c6,
    0x100d7cb,0xd7fb, 0x100f900,0xfa6d, 0x100fa70,0xfad9, 0x100fb00,0xfb06, 0x100fb13,0xfb17, 0x100fb1d,0xfb1d,
    0x100fb1f,0xfb28, 0x100fb2a,0xfb36, 0x100fb38,0xfb3c, 0x100fb3e,0xfb3e, 0x100fb40,0xfb41, 0x100fb43,0xfb44,
    0x100fb46,0xfbb1, 0x100fbd3,0xfd3d, 0x100fd50,0xfd8f, 0x100fd92,0xfdc7, 0x100fdf0,0xfdfb, 0x100fe70,0xfe74,
    0x100fe76,0xfefc, 0x200ff10,0xff19, 0x100ff21,0xff3a, 0x100ff41,0xff5a, 0x100ff66,0xffbe, 0x100ffc2,0xffc7,
    0x100ffca,0xffcf, 0x100ffd2,0xffd7, 0x100ffda,0xffdc, 0x1010000,0x1000b, 0x101000d,0x10026, 0x1010028,0x1003a,
    0x101003c,0x1003d, 0x101003f,0x1004d, 0x1010050,0x1005d, 0x1010080,0x100fa, 0x2010107,0x10133, 0x2010140,0x10178,
    0x201018a,0x1018b, 0x1010280,0x1029c, 0x10102a0,0x102d0, 0x20102e1,0x102fb, 0x1010300,0x1031f, 0x2010320,0x10323,
    0x101032d,0x10340, 0x2010341,0x10341, 0x1010342,0x10349, 0x201034a,0x1034a, 0x1010350,0x10375, 0x1010380,0x1039d,
    0x10103a0,0x103c3, 0x10103c8,0x103cf, 0x20103d1,0x103d5, 0x1010400,0x1049d, 0x20104a0,0x104a9, 0x10104b0,0x104d3,
    0x10104d8,0x104fb, 0x1010500,0x10527, 0x1010530,0x10563, 0x1010570,0x1057a, 0x101057c,0x1058a, 0x101058c,0x10592,
    0x1010594,0x10595, 0x1010597,0x105a1, 0x10105a3,0x105b1, 0x10105b3,0x105b9, 0x10105bb,0x105bc, 0x10105c0,0x105f3,
    0x1010600,0x10736, 0x1010740,0x10755, 0x1010760,0x10767, 0x1010780,0x10785, 0x1010787,0x107b0, 0x10107b2,0x107bf,
    0x1010800,0x10805, 0x1010808,0x10808, 0x101080a,0x10835, 0x1010837,0x10838, 0x101083c,0x1083c, 0x101083f,0x10855,
    0x2010858,0x1085f, 0x1010860,0x10876, 0x2010879,0x1087f, 0x1010880,0x1089e, 0x20108a7,0x108af, 0x10108e0,0x108f2,
    0x10108f4,0x108f5, 0x20108fb,0x108ff, 0x1010900,0x10915, 0x2010916,0x1091b, 0x1010920,0x10939, 0x1010940,0x10959,
    0x1010980,0x109b7, 0x20109bc,0x109bd, 0x10109be,0x109bf, 0x20109c0,0x109cf, 0x20109d2,0x109ff, 0x1010a00,0x10a00,
    0x1010a10,0x10a13, 0x1010a15,0x10a17, 0x1010a19,0x10a35, 0x2010a40,0x10a48, 0x1010a60,0x10a7c, 0x2010a7d,0x10a7e,
    0x1010a80,0x10a9c, 0x2010a9d,0x10a9f, 0x1010ac0,0x10ac7, 0x1010ac9,0x10ae4, 0x2010aeb,0x10aef, 0x1010b00,0x10b35,
    0x1010b40,0x10b55, 0x2010b58,0x10b5f, 0x1010b60,0x10b72, 0x2010b78,0x10b7f, 0x1010b80,0x10b91, 0x2010ba9,0x10baf,
    0x1010c00,0x10c48, 0x1010c80,0x10cb2, 0x1010cc0,0x10cf2, 0x2010cfa,0x10cff, 0x1010d00,0x10d23, 0x2010d30,0x10d39,
    0x2010d40,0x10d49, 0x1010d4a,0x10d65, 0x1010d6f,0x10d85, 0x2010e60,0x10e7e, 0x1010e80,0x10ea9, 0x1010eb0,0x10eb1,
    0x1010ec2,0x10ec7, 0x1010ed9,0x10eee, 0x1010f00,0x10f1c, 0x2010f1d,0x10f26, 0x1010f27,0x10f27, 0x1010f30,0x10f45,
    0x2010f51,0x10f54, 0x1010f70,0x10f81, 0x1010fb0,0x10fc4, 0x2010fc5,0x10fcb, 0x1010fe0,0x10ff6, 0x1011003,0x11037,
    0x2011052,0x1106f, 0x1011071,0x11072, 0x1011075,0x11075, 0x1011083,0x110af, 0x10110d0,0x110e8, 0x20110f0,0x110f9,
    0x1011103,0x11126, 0x2011136,0x1113f, 0x1011144,0x11144, 0x1011147,0x11147, 0x1011150,0x11172, 0x1011176,0x11176,
    0x1011183,0x111b2, 0x10111c1,0x111c4, 0x20111d0,0x111d9, 0x10111da,0x111da, 0x10111dc,0x111dc, 0x20111e1,0x111f4,
    0x1011200,0x11211, 0x1011213,0x1122b, 0x101123f,0x11240, 0x1011280,0x11286, 0x1011288,0x11288, 0x101128a,0x1128d,
    0x101128f,0x1129d, 0x101129f,0x112a8, 0x10112b0,0x112de, 0x20112f0,0x112f9, 0x1011305,0x1130c, 0x101130f,0x11310,
    0x1011313,0x11328, 0x101132a,0x11330, 0x1011332,0x11333, 0x1011335,0x11339, 0x101133d,0x1133d, 0x1011350,0x11350,
    0x101135d,0x11361, 0x1011380,0x11389, 0x101138b,0x1138b, 0x101138e,0x1138e, 0x1011390,0x113b5, 0x10113b7,0x113b7,
    0x10113d1,0x113d1, 0x10113d3,0x113d3, 0x1011400,0x11434, 0x1011447,0x1144a, 0x2011450,0x11459, 0x101145f,0x11461,
    0x1011480,0x114af, 0x10114c4,0x114c5, 0x10114c7,0x114c7, 0x20114d0,0x114d9, 0x1011580,0x115ae, 0x10115d8,0x115db,
    0x1011600,0x1162f, 0x1011644,0x11644, 0x2011650,0x11659, 0x1011680,0x116aa, 0x10116b8,0x116b8, 0x20116c0,0x116c9,
    0x20116d0,0x116e3, 0x1011700,0x1171a, 0x2011730,0x1173b, 0x1011740,0x11746, 0x1011800,0x1182b, 0x10118a0,0x118df,
    0x20118e0,0x118f2, 0x10118ff,0x11906, 0x1011909,0x11909, 0x101190c,0x11913, 0x1011915,0x11916, 0x1011918,0x1192f,
    0x101193f,0x1193f, 0x1011941,0x11941, 0x2011950,0x11959, 0x10119a0,0x119a7, 0x10119aa,0x119d0, 0x10119e1,0x119e1,
    0x10119e3,0x119e3, 0x1011a00,0x11a00, 0x1011a0b,0x11a32, 0x1011a3a,0x11a3a, 0x1011a50,0x11a50, 0x1011a5c,0x11a89,
    0x1011a9d,0x11a9d, 0x1011ab0,0x11af8, 0x1011b0a,0x11b0a, 0x1011bc0,0x11be0, 0x2011bf0,0x11bf9, 0x1011c00,0x11c08,
    0x1011c0a,0x11c2e, 0x1011c40,0x11c40, 0x2011c50,0x11c6c, 0x1011c72,0x11c8f, 0x1011d00,0x11d06, 0x1011d08,0x11d09,
    0x1011d0b,0x11d30, 0x1011d46,0x11d46, 0x2011d50,0x11d59, 0x1011d60,0x11d65, 0x1011d67,0x11d68, 0x1011d6a,0x11d89,
    0x1011d98,0x11d98, 0x2011da0,0x11da9, 0x1011db0,0x11ddb, 0x2011de0,0x11de9, 0x1011df1,0x11df1, 0x1011ee0,0x11ef2,
    0x1011f02,0x11f02, 0x1011f04,0x11f10, 0x1011f12,0x11f33, 0x2011f50,0x11f59, 0x1011fb0,0x11fb0, 0x2011fc0,0x11fd4,
    0x1012000,0x12399, 0x2012400,0x1246f, 0x2012475,0x1247f, 0x1012480,0x12543, 0x2012550,0x12686, 0x1012f90,0x12ff0,
    0x1013000,0x1342f, 0x1013441,0x13446, 0x1013460,0x143fa, 0x1014400,0x14646, 0x1016100,0x1611d, 0x2016130,0x16139,
    0x1016800,0x16a38, 0x1016a40,0x16a5e, 0x2016a60,0x16a69, 0x1016a70,0x16abe, 0x2016ac0,0x16ac9, 0x1016ad0,0x16aed,
    0x1016b00,0x16b2f, 0x1016b40,0x16b43, 0x2016b50,0x16b59, 0x2016b5b,0x16b61, 0x1016b63,0x16b77, 0x1016b7d,0x16b8f,
    0x1016d40,0x16d6c, 0x2016d70,0x16d79, 0x1016e40,0x16e7f, 0x2016e80,0x16e96, 0x1016ea0,0x16eb8, 0x1016ebb,0x16ed3,
    0x1016f00,0x16f4a, 0x1016f50,0x16f50, 0x1016f93,0x16f9f, 0x1016fe0,0x16fe1, 0x1016fe3,0x16fe3, 0x1016ff2,0x16ff3,
    0x2016ff4,0x16ff6, 0x1017000,0x18cda, 0x1018cff,0x18d20, 0x1018d80,0x18df2, 0x1018e00,0x19191, 0x10191a0,0x191d2,
    0x101aff0,0x1aff3, 0x101aff5,0x1affb, 0x101affd,0x1affe, 0x101b000,0x1b128, 0x101b132,0x1b132, 0x101b150,0x1b152,
    0x101b155,0x1b155, 0x101b164,0x1b168, 0x101b170,0x1b2fb, 0x101bc00,0x1bc6a, 0x101bc70,0x1bc7c, 0x101bc80,0x1bc88,
    0x101bc90,0x1bc99, 0x201ccf0,0x1ccf9, 0x201d2c0,0x1d2d3, 0x201d2e0,0x1d2f3, 0x201d360,0x1d378, 0x101d400,0x1d454,
    0x101d456,0x1d49c, 0x101d49e,0x1d49f, 0x101d4a2,0x1d4a2, 0x101d4a5,0x1d4a6, 0x101d4a9,0x1d4ac, 0x101d4ae,0x1d4b9,
    0x101d4bb,0x1d4bb, 0x101d4bd,0x1d4c3, 0x101d4c5,0x1d505, 0x101d507,0x1d50a, 0x101d50d,0x1d514, 0x101d516,0x1d51c,
    0x101d51e,0x1d539, 0x101d53b,0x1d53e, 0x101d540,0x1d544, 0x101d546,0x1d546, 0x101d54a,0x1d550, 0x101d552,0x1d6a6,
    0x101d6a8,0x1d6c0, 0x101d6c2,0x1d6da, 0x101d6dc,0x1d6fa, 0x101d6fc,0x1d714, 0x101d716,0x1d734, 0x101d736,0x1d74e,
    0x101d750,0x1d76e, 0x101d770,0x1d788, 0x101d78a,0x1d7a8, 0x101d7aa,0x1d7c2, 0x101d7c4,0x1d7cb, 0x201d7ce,0x1d7ff,
    0x101df00,0x1df81, 0x101df90,0x1df96, 0x101dfcd,0x1dfff, 0x101e030,0x1e06d, 0x101e100,0x1e12c, 0x101e137,0x1e13d,
    0x201e140,0x1e149, 0x101e14e,0x1e14e, 0x101e290,0x1e2ad, 0x101e2c0,0x1e2eb, 0x201e2f0,0x1e2f9, 0x101e4d0,0x1e4eb,
    0x201e4f0,0x1e4f9, 0x101e5d0,0x1e5ed, 0x101e5f0,0x1e5f0, 0x201e5f1,0x1e5fa, 0x101e6c0,0x1e6de, 0x101e6e0,0x1e6e2,
    0x101e6e4,0x1e6e5, 0x101e6e7,0x1e6ed, 0x101e6f0,0x1e6f4, 0x101e6fe,0x1e6ff, 0x101e7e0,0x1e7e6, 0x101e7e8,0x1e7eb,
    0x101e7ed,0x1e7ee, 0x101e7f0,0x1e7fe, 0x101e800,0x1e8c4, 0x201e8c7,0x1e8cf, 0x101e900,0x1e943, 0x101e94b,0x1e94b,
    0x201e950,0x1e959, 0x201ec71,0x1ecab, 0x201ecad,0x1ecaf, 0x201ecb1,0x1ecb4, 0x201ed01,0x1ed2d, 0x201ed2f,0x1ed3d,
    0x101ee00,0x1ee03, 0x101ee05,0x1ee1f, 0x101ee21,0x1ee22, 0x101ee24,0x1ee24, 0x101ee27,0x1ee27, 0x101ee29,0x1ee32,
    0x101ee34,0x1ee37, 0x101ee39,0x1ee39, 0x101ee3b,0x1ee3b, 0x101ee42,0x1ee42, 0x101ee47,0x1ee47, 0x101ee49,0x1ee49,
    0x101ee4b,0x1ee4b, 0x101ee4d,0x1ee4f, 0x101ee51,0x1ee52, 0x101ee54,0x1ee54, 0x101ee57,0x1ee57, 0x101ee59,0x1ee59,
    0x101ee5b,0x1ee5b, 0x101ee5d,0x1ee5d, 0x101ee5f,0x1ee5f, 0x101ee61,0x1ee62, 0x101ee64,0x1ee64, 0x101ee67,0x1ee6a,
    0x101ee6c,0x1ee72, 0x101ee74,0x1ee77, 0x101ee79,0x1ee7c, 0x101ee7e,0x1ee7e, 0x101ee80,0x1ee89, 0x101ee8b,0x1ee9b,
    0x101eea1,0x1eea3, 0x101eea5,0x1eea9, 0x101eeab,0x1eebb, 0x201f100,0x1f10c, 0x201fbf0,0x1fbf9, 0x1020000,0x2a6df,
    0x102a700,0x2b81e, 0x102b820,0x2cead, 0x102ceb0,0x2ebe0, 0x102ebf0,0x2ee5d, 0x102f800,0x2fa1d, 0x1030000,0x3134a,
    0x1031350,0x33479, 0x103d000,0x3fc3f,
};
/* END lt__tok_ranges */

/* The class bits of code point c (0: none of them; invalid bytes have none). */
static int lt__tok_class(uint32_t c) {
    size_t lo = 0, hi = sizeof lt__tok_ranges / sizeof lt__tok_ranges[0] / 2;
    if (c < 128) {
        if ((c | 32) - 'a' < 26) return LT__TOK_L;
        if (c - '0' < 10) return LT__TOK_N;
        if (c == ' ' || (c >= 9 && c <= 13)) return LT__TOK_S | ((c == '\n' || c == '\r') ? LT__TOK_NL : 0);
        return 0;
    }
    if (c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
        c == 0x202f || c == 0x205f || c == 0x3000)
        return LT__TOK_S;
    while (lo < hi) {   /* the last range starting at or before c */
        size_t mid = (lo + hi) / 2;
        if ((lt__tok_ranges[2 * mid] & 0xffffffu) <= c) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || c > lt__tok_ranges[2 * (lo - 1) + 1]) return 0;
    return (int)(lt__tok_ranges[2 * (lo - 1)] >> 24);
}

/* The character at s[0..n) (n >= 1): its length and code point.  A byte that does not start a
   complete, shortest-form sequence of a scalar value (a stray continuation byte, an overlong form,
   a surrogate, past U+10FFFF, a sequence cut short) is a character of one byte, LT__TOK_BAD. */
static size_t lt__tok_utf8(const unsigned char *s, size_t n, uint32_t *cp) {
    int k = lt__utf8_next(s, n, cp);
    if (k) return (size_t)k;
    *cp = LT__TOK_BAD;
    return 1;
}

/* The character at s[0..n): its length, and its class bits in *cls. */
static size_t lt__tok_char(const unsigned char *s, size_t n, int *cls) {
    uint32_t cp;
    size_t k;
    if (s[0] < 0x80) { *cls = lt__tok_class(s[0]); return 1; }
    k = lt__tok_utf8(s, n, &cp);
    *cls = cp == LT__TOK_BAD ? 0 : lt__tok_class(cp);
    return k;
}

static size_t lt__tok_put_utf8(unsigned char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = (unsigned char)(0xc0 | (cp >> 6)); o[1] = (unsigned char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (cp >> 12)); o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (cp >> 18)); o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* GPT-2's bytes_to_unicode: the 188 printable bytes stand for themselves, the other 68 (0x00-0x20,
   0x7f-0xa0, 0xad) in order for U+0100 + their index among them. */
LTRAIN_DEF uint32_t lt_tok_byte_char(int b) {
    if (b < 0 || b > 255) return LT__TOK_BAD;
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae) return (uint32_t)b;
    if (b <= 0x20) return 256u + (uint32_t)b;
    if (b <= 0xa0) return 256u + 33u + (uint32_t)(b - 0x7f);
    return 256u + 67u;
}
LTRAIN_DEF int lt_tok_char_byte(uint32_t cp) {
    if ((cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || (cp >= 0xae && cp <= 0xff)) return (int)cp;
    if (cp < 256 || cp >= 256 + 68) return -1;
    cp -= 256;
    if (cp <= 0x20) return (int)cp;
    if (cp < 67) return (int)(cp - 33 + 0x7f);
    return 0xad;
}

/* ---- @@TOK.pretok  the pre-tokenizer patterns ------------------------------------------------ */
/* Each function returns the length of the match the regex engines find at s[0] (leftmost
   alternative that matches, greedy, with backtracking where it changes the result).  Each
   alternative's comment is the regex piece it implements. */

/* \s+(?!\S)|\s+ at a whitespace character; nl (cl100k's \s*[\r\n]+ first): the run up to its
   last \r or \n when it has one. */
static size_t lt__pretok_space(const unsigned char *s, size_t n, int nl) {
    size_t i = 0, last = 0, k, after_nl = 0;
    int c;
    while (i < n) {
        k = lt__tok_char(s + i, n - i, &c);
        if (!(c & LT__TOK_S)) break;
        if (c & LT__TOK_NL) after_nl = i + 1;
        last = i;
        i += k;
    }
    if (nl && after_nl) return after_nl;   /* \s*[\r\n]+: backtracks to the last newline of the run */
    if (i == n || last == 0) return i;     /* \s+(?!\S) at the end, or \s+ of one character */
    return last;                           /* \s+(?!\S): the run but its last character */
}

/* A run of characters all with (want != 0) or all without (want == 0) the bits in mask. */
static size_t lt__pretok_run(const unsigned char *s, size_t n, size_t i, int mask, int want) {
    int c;
    while (i < n) {
        size_t k = lt__tok_char(s + i, n - i, &c);
        if (((c & mask) != 0) != (want != 0)) break;
        i += k;
    }
    return i;
}

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t lt__pretok_gpt2(const unsigned char *s, size_t n) {
    size_t i, k;
    int c;
    if (s[0] == '\'' && n >= 2) {
        unsigned a = s[1], b = n >= 3 ? s[2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    i = s[0] == ' ' && n > 1;
    k = lt__tok_char(s + i, n - i, &c);
    if (c & LT__TOK_L) return lt__pretok_run(s, n, i + k, LT__TOK_L, 1);
    if (c & LT__TOK_N) return lt__pretok_run(s, n, i + k, LT__TOK_N, 1);
    if (!(c & LT__TOK_S)) return lt__pretok_run(s, n, i + k, LT__TOK_L | LT__TOK_N | LT__TOK_S, 0);
    return lt__pretok_space(s, n, 0);
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
   \s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t lt__pretok_cl100k(const unsigned char *s, size_t n, int digits) {
    size_t i, k, k0;
    int c, c0, d;
    if (s[0] == '\'' && n >= 2) {
        unsigned a = s[1] | 32u, b = n >= 3 ? s[2] | 32u : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
        if (s[1] == 0xc5 && n >= 3 && s[2] == 0xbf) return 3;   /* U+017F long s, which (?i) folds to s */
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    k0 = lt__tok_char(s, n, &c0);
    if (c0 & LT__TOK_L) return lt__pretok_run(s, n, k0, LT__TOK_L, 1);
    if (!(c0 & (LT__TOK_N | LT__TOK_NL)) && k0 < n) {   /* [^\r\n\p{L}\p{N}]\p{L}+ */
        k = lt__tok_char(s + k0, n - k0, &c);
        if (c & LT__TOK_L) return lt__pretok_run(s, n, k0 + k, LT__TOK_L, 1);
    }
    if (c0 & LT__TOK_N) {
        for (i = k0, d = 1; d < digits && i < n; d++) {
            k = lt__tok_char(s + i, n - i, &c);
            if (!(c & LT__TOK_N)) break;
            i += k;
        }
        return i;
    }
    i = s[0] == ' ' && n > 1;
    k = i ? lt__tok_char(s + 1, n - 1, &c) : (c = c0, k0);
    if (!(c & (LT__TOK_L | LT__TOK_N | LT__TOK_S))) {
        i = lt__pretok_run(s, n, i + k, LT__TOK_L | LT__TOK_N | LT__TOK_S, 0);
        while (i < n && (s[i] == '\r' || s[i] == '\n')) i++;
        return i;
    }
    return lt__pretok_space(s, n, 1);
}

LTRAIN_DEF size_t lt_pretok_next(lt_pretok p, const char *text, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    if (!text || n == 0) return 0;
    switch (p) {
    case LT_PRETOK_GPT2: return lt__pretok_gpt2(s, n);
    case LT_PRETOK_CL100K: return lt__pretok_cl100k(s, n, 3);
    case LT_PRETOK_QWEN2: return lt__pretok_cl100k(s, n, 1);
    }
    return 0;
}


/* ---- @@TOK.json  a JSON reader for vocabulary files ------------------------------------------- */
/* A cursor over one JSON text, reading values where the loader expects them (no tree: a vocabulary
   of 10^5 tokens needs no more than its own bytes).  Strings are checked UTF-8 and unescaped
   (\uXXXX with surrogate pairs) into str; numbers the loaders use must be integers. */
typedef struct {
    lt_ctx *ctx;
    const char *fn, *label;       /* the API function and the source, for messages */
    const unsigned char *s;
    size_t n, i;
    char *str;                    /* the last string read, NUL-terminated (may hold NULs: slen) */
    size_t slen, scap;
} lt__tj;

static int lt__tj_fail(lt__tj *j, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lt_set_error(j->ctx, LT_ERR_FORMAT, "%s: %s: %s (at byte %zu)", j->fn, j->label, msg, j->i);
    return 0;
}

static void lt__tj_ws(lt__tj *j) {
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r')) j->i++;
}
/* The next non-blank byte (not consumed), or -1 at the end. */
static int lt__tj_peek(lt__tj *j) {
    lt__tj_ws(j);
    return j->i < j->n ? j->s[j->i] : -1;
}
static int lt__tj_expect(lt__tj *j, char c, const char *what) {
    if (lt__tj_peek(j) != (unsigned char)c)
        return lt__tj_fail(j, j->i < j->n ? "expected %s, found '%c'" : "expected %s, found the end of the text", what,
                           j->i < j->n ? j->s[j->i] : ' ');
    j->i++;
    return 1;
}

static int lt__tj_put(lt__tj *j, const unsigned char *b, size_t k) {
    if (j->slen + k + 1 > j->scap) {
        size_t cap = j->scap ? j->scap * 2 : 256;
        char *p;
        while (cap < j->slen + k + 1) cap *= 2;
        p = (char *)LT__REALLOC(j->str, cap);
        if (!p) { lt_set_error(j->ctx, LT_ERR_NOMEM, "%s: %s: out of memory reading a string", j->fn, j->label); return 0; }
        j->str = p;
        j->scap = cap;
    }
    memcpy(j->str + j->slen, b, k);
    j->slen += k;
    j->str[j->slen] = 0;
    return 1;
}

static int lt__tj_hex4(lt__tj *j, uint32_t *v) {
    int k;
    *v = 0;
    if (j->n - j->i < 4) return lt__tj_fail(j, "a \\u escape cut short");
    for (k = 0; k < 4; k++) {
        int c = j->s[j->i++], d = c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
        if (d < 0) return lt__tj_fail(j, "'%c' in a \\u escape", c);
        *v = *v * 16 + (uint32_t)d;
    }
    return 1;
}

/* A string at the cursor into j->str / j->slen. */
static int lt__tj_string(lt__tj *j) {
    unsigned char u[4];
    if (lt__tj_peek(j) != '"') return lt__tj_expect(j, '"', "a string");
    j->i++;
    j->slen = 0;
    u[0] = 0;
    if (!lt__tj_put(j, u, 0)) return 0;   /* str is a valid empty string from here on */
    for (;;) {
        size_t st = j->i;
        uint32_t cp;
        while (j->i < j->n && j->s[j->i] >= 0x20 && j->s[j->i] < 0x80 && j->s[j->i] != '"' && j->s[j->i] != '\\') j->i++;
        if (j->i > st && !lt__tj_put(j, j->s + st, j->i - st)) return 0;
        if (j->i >= j->n) return lt__tj_fail(j, "a string without its closing quote");
        if (j->s[j->i] == '"') { j->i++; return 1; }
        if (j->s[j->i] < 0x20) return lt__tj_fail(j, "control character 0x%02x inside a string", j->s[j->i]);
        if (j->s[j->i] >= 0x80) {
            size_t k = lt__tok_utf8(j->s + j->i, j->n - j->i, &cp);
            if (cp == LT__TOK_BAD) return lt__tj_fail(j, "invalid UTF-8 (byte 0x%02x) inside a string", j->s[j->i]);
            if (!lt__tj_put(j, j->s + j->i, k)) return 0;
            j->i += k;
            continue;
        }
        if (++j->i >= j->n) return lt__tj_fail(j, "a string without its closing quote");
        switch (j->s[j->i++]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = 8; break;
        case 'f': cp = 12; break;
        case 'n': cp = 10; break;
        case 'r': cp = 13; break;
        case 't': cp = 9; break;
        case 'u':
            if (!lt__tj_hex4(j, &cp)) return 0;
            if (cp >= 0xdc00 && cp <= 0xdfff) return lt__tj_fail(j, "a lone low surrogate \\u%04x", (unsigned)cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                uint32_t lo;
                if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
                    return lt__tj_fail(j, "a high surrogate \\u%04x without its low half", (unsigned)cp);
                j->i += 2;
                if (!lt__tj_hex4(j, &lo)) return 0;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return lt__tj_fail(j, "a high surrogate \\u%04x followed by \\u%04x", (unsigned)cp, (unsigned)lo);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            break;
        default: j->i--; return lt__tj_fail(j, "unknown escape '\\%c'", j->s[j->i]);
        }
        if (!lt__tj_put(j, u, lt__tok_put_utf8(u, cp))) return 0;
    }
}

/* An integer at the cursor; values past +-2^62 read as +-2^62 (the callers refuse them). */
static int lt__tj_int(lt__tj *j, int64_t *v) {
    int neg = 0, c = lt__tj_peek(j);
    int64_t x = 0, lim = (int64_t)1 << 62;
    if (c == '-') { neg = 1; j->i++; }
    if (j->i >= j->n || j->s[j->i] < '0' || j->s[j->i] > '9') return lt__tj_fail(j, "expected an integer");
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
        x = x >= lim / 10 ? lim : x * 10 + (j->s[j->i] - '0');
        j->i++;
    }
    if (j->i < j->n && (j->s[j->i] == '.' || j->s[j->i] == 'e' || j->s[j->i] == 'E'))
        return lt__tj_fail(j, "expected an integer, found a fraction or an exponent");
    *v = neg ? -x : x;
    return 1;
}

/* true / false at the cursor. */
static int lt__tj_bool(lt__tj *j, int *b) {
    lt__tj_ws(j);
    if (j->n - j->i >= 4 && !memcmp(j->s + j->i, "true", 4)) { j->i += 4; *b = 1; return 1; }
    if (j->n - j->i >= 5 && !memcmp(j->s + j->i, "false", 5)) { j->i += 5; *b = 0; return 1; }
    return lt__tj_fail(j, "expected true or false");
}
static int lt__tj_is_null(lt__tj *j) {
    lt__tj_ws(j);
    return j->n - j->i >= 4 && !memcmp(j->s + j->i, "null", 4);
}

/* Passes over any value (containers nested at most 64 deep). */
static int lt__tj_skip(lt__tj *j, int depth) {
    int c = lt__tj_peek(j), k = 0;
    if (depth > 64) return lt__tj_fail(j, "values nested deeper than 64");
    if (c == '"') return lt__tj_string(j);
    if (c == '{' || c == '[') {
        int close = c == '{' ? '}' : ']';
        j->i++;
        if (lt__tj_peek(j) == close) { j->i++; return 1; }
        for (;; k++) {
            if (c == '{' && (!lt__tj_string(j) || !lt__tj_expect(j, ':', "':'"))) return 0;
            if (!lt__tj_skip(j, depth + 1)) return 0;
            c = lt__tj_peek(j);
            if (c == close) { j->i++; return 1; }
            if (!lt__tj_expect(j, ',', close == '}' ? "',' or '}'" : "',' or ']'")) return 0;
            c = close == '}' ? '{' : '[';
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        size_t st = j->i;
        while (j->i < j->n && strchr("0123456789+-.eE", j->s[j->i]) && j->s[j->i]) j->i++;
        if (j->i == st + (c == '-')) return lt__tj_fail(j, "a number without digits");
        return 1;
    }
    if (c == 't' || c == 'f') { int b; return lt__tj_bool(j, &b); }
    if (lt__tj_is_null(j)) { j->i += 4; return 1; }
    return lt__tj_fail(j, c < 0 ? "expected a value, found the end of the text" : "expected a value, found '%c'", c);
}

/* Inside an object (after its '{'): reads the next key into str and its ':'; 1, or 0 at the '}'
   (consumed) or on an error (lt_failed then).  *k counts the members read. */
static int lt__tj_member(lt__tj *j, int64_t *k) {
    int c = lt__tj_peek(j);
    if (*k == 0 && c == '}') { j->i++; return 0; }
    if (*k > 0) {
        if (c == '}') { j->i++; return 0; }
        if (!lt__tj_expect(j, ',', "',' or '}'")) return 0;
    }
    (*k)++;
    return lt__tj_string(j) && lt__tj_expect(j, ':', "':'");
}
/* Inside an array (after its '['): 1 when a value follows (not read), 0 at the ']' or an error. */
static int lt__tj_item(lt__tj *j, int64_t *k) {
    int c = lt__tj_peek(j);
    if (*k == 0 && c == ']') { j->i++; return 0; }
    if (*k > 0) {
        if (c == ']') { j->i++; return 0; }
        if (!lt__tj_expect(j, ',', "',' or ']'")) return 0;
    }
    (*k)++;
    if (lt__tj_peek(j) < 0) return lt__tj_fail(j, "expected a value, found the end of the text");
    return 1;
}

/* The members named in names[0..n) of the object at the cursor: at[k] = the offset of member k's
   value, 0 when absent.  Other members are passed over; a name given twice is an error. */
static int lt__tj_fields(lt__tj *j, const char *what, const char *const *names, int n, size_t *at) {
    int64_t k = 0;
    int f;
    for (f = 0; f < n; f++) at[f] = 0;
    if (!lt__tj_expect(j, '{', what)) return 0;
    while (lt__tj_member(j, &k)) {
        for (f = 0; f < n; f++)
            if (!strcmp(j->str, names[f])) {
                if (at[f]) return lt__tj_fail(j, "\"%s\" given twice", names[f]);
                lt__tj_ws(j);
                at[f] = j->i;
            }
        if (!lt__tj_skip(j, 1)) return 0;
    }
    return !lt_failed(j->ctx);
}

/* ---- @@TOK.load  loading GPT-2's files and tokenizer.json --------------------------------------- */
#define LT__TOK_CKEY 24      /* pre-tokens up to this many bytes are cached ... */
#define LT__TOK_CIDS 6       /* ... when they encode to at most this many ids */
#define LT__TOK_CSLOTS 8192  /* direct-mapped cache entries */
#define LT__TOK_NO_KEY UINT64_MAX

typedef struct { uint64_t key; int32_t rank, id; } lt__tok_mslot;            /* key: a << 32 | b */
typedef struct { uint64_t hash; uint8_t len, nids; unsigned char key[LT__TOK_CKEY]; int32_t ids[LT__TOK_CIDS]; } lt__tok_centry;

struct lt_tokenizer {
    lt_ctx *ctx;
    lt_pretok pat;
    int direct;                 /* a pre-token that is a token encodes to it without merging (ignore_merges) */
    int32_t nvocab;             /* ids 0 .. nvocab-1 (some may have no token) */
    int32_t ntokens;            /* ids that have a token */
    uint32_t *off, *len;        /* token id: bytes[off[id] ..][len[id]]; len 0: no token */
    unsigned char *special;     /* per id: 1 for special (added) tokens */
    char *bytes;
    size_t nbytes, capbytes;
    int32_t byte_id[256];       /* the token of each single byte */
    int32_t *vslot;             /* vocabulary hash (token bytes -> id), -1 empty */
    size_t vmask;
    lt__tok_mslot *mslot;       /* merge hash ((a, b) -> rank, merged id) */
    size_t mmask;
    int32_t nmerges;
    int32_t *spec;              /* special ids, longest text first */
    int nspec;
    unsigned char sfirst[256];  /* 1 for the first bytes of special tokens */
    lt__tok_centry *cache;      /* made at the first encode */
    /* scratch of one pre-token's BPE: symbols, pair ranks / links, heap */
    int32_t *sym, *aux1, *aux2, *heap;
    size_t scap;
    /* during loading: (id, off, len) of each token read, and the merge-pair concatenation */
    int32_t *ent;
    size_t nent, capent;
    unsigned char *pair;
    size_t cappair;
};

static uint64_t lt__tok_mix(uint64_t h) {
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ull; h ^= h >> 33;
    return h;
}
static uint64_t lt__tok_hash(const unsigned char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    while (n >= 8) { memcpy(&w, s, 8); h = (h ^ w) * 0xff51afd7ed558ccdull; h ^= h >> 29; s += 8; n -= 8; }
    if (n) { w = 0; memcpy(&w, s, n); h = (h ^ w) * 0xc4ceb9fe1a85ec53ull; }
    return lt__tok_mix(h);
}

LTRAIN_DEF int32_t lt_tok_lookup(const lt_tokenizer *tk, const char *bytes, size_t len) {
    size_t i;
    if (!tk || !tk->vslot || (!bytes && len)) return -1;
    for (i = lt__tok_hash((const unsigned char *)bytes, len) & tk->vmask;; i = (i + 1) & tk->vmask) {
        int32_t id = tk->vslot[i];
        if (id < 0) return -1;
        if (tk->len[id] == len && !memcmp(tk->bytes + tk->off[id], bytes, len)) return id;
    }
}

/* The rank of the pair (a, b) and *id the token it merges to; -1 when they do not merge. */
static int32_t lt__tok_rank(const lt_tokenizer *tk, int32_t a, int32_t b, int32_t *id) {
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t i;
    for (i = lt__tok_mix(key) & tk->mmask;; i = (i + 1) & tk->mmask) {
        const lt__tok_mslot *e = &tk->mslot[i];
        if (e->key == key) { *id = e->id; return e->rank; }
        if (e->key == LT__TOK_NO_KEY) return -1;
    }
}

LTRAIN_DEF void lt_tok_free(lt_tokenizer *tk) {
    if (!tk) return;
    LT__FREE(tk->off); LT__FREE(tk->len); LT__FREE(tk->special); LT__FREE(tk->bytes);
    LT__FREE(tk->vslot); LT__FREE(tk->mslot); LT__FREE(tk->spec); LT__FREE(tk->cache);
    LT__FREE(tk->sym); LT__FREE(tk->aux1); LT__FREE(tk->aux2); LT__FREE(tk->heap);
    LT__FREE(tk->ent); LT__FREE(tk->pair);
    LT__FREE(tk);
}

static lt_tokenizer *lt__tok_new(lt_ctx *ctx) {
    lt_tokenizer *tk = (lt_tokenizer *)LT__MALLOC(sizeof *tk);
    if (!tk) { lt_set_error(ctx, LT_ERR_NOMEM, "lt_tok: out of memory for a tokenizer"); return NULL; }
    memset(tk, 0, sizeof *tk);
    tk->ctx = ctx;
    tk->pat = LT_PRETOK_GPT2;
    return tk;
}

/* Grows *p (elements of size sz, capacity *cap) to hold at least need; 0 when out of memory. */
static int lt__tok_grow(void **p, size_t *cap, size_t need, size_t sz) {
    size_t c = *cap ? *cap : 64, bytes;
    void *q;
    if (need <= *cap) return 1;
    while (c < need) { if (c > SIZE_MAX / 2) return 0; c *= 2; }
    if (!lt_mul_size(c, sz, &bytes) || !(q = LT__REALLOC(*p, bytes))) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* Appends a token read from a file: its raw bytes and id (checked later, in lt__tok_index). */
static int lt__tok_add(lt_tokenizer *tk, const char *fn, const char *label, const unsigned char *b, size_t n, int64_t id,
                       const char *shown, int special) {
    if (n == 0) { lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token %lld is the empty string", fn, label, (long long)id); return 0; }
    if (id < 0 || id > INT32_MAX - 1) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token \"%.60s\" has id %lld: ids must be in [0, 2^31-1)", fn, label,
                     shown, (long long)id);
        return 0;
    }
    if (n > UINT32_MAX / 2 || tk->nbytes + n > UINT32_MAX / 2) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: the tokens hold more than 2^31 bytes", fn, label);
        return 0;
    }
    if (!lt__tok_grow((void **)&tk->bytes, &tk->capbytes, tk->nbytes + n, 1) ||
        !lt__tok_grow((void **)&tk->ent, &tk->capent, 4 * (tk->nent + 1), sizeof(int32_t))) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for the vocabulary", fn, label);
        return 0;
    }
    memcpy(tk->bytes + tk->nbytes, b, n);
    tk->ent[4 * tk->nent] = (int32_t)id;
    tk->ent[4 * tk->nent + 1] = (int32_t)tk->nbytes;
    tk->ent[4 * tk->nent + 2] = (int32_t)n;
    tk->ent[4 * tk->nent + 3] = special;
    tk->nent++;
    tk->nbytes += n;
    return 1;
}

/* Shows bytes in a message: printable ASCII as is, other bytes as \xNN (about 60 bytes at most). */
static const char *lt__tok_show_raw(const unsigned char *b, size_t n, char *buf, size_t cap) {
    size_t i, o = 0;
    for (i = 0; i < n && o + 5 < cap && o < 60; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\') buf[o++] = (char)b[i];
        else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", b[i]);
    }
    buf[o] = 0;
    return buf;
}
static const char *lt__tok_show(const lt_tokenizer *tk, int32_t id, char *buf, size_t cap) {
    return lt__tok_show_raw((const unsigned char *)tk->bytes + tk->off[id], tk->len[id], buf, cap);
}

/* Marks token id as special (split out of the text by LT_TOK_SPECIAL). */
static int lt__tok_mark_special(lt_tokenizer *tk, int32_t id) {
    int32_t *p;
    int k;
    if (tk->special[id]) return 1;
    p = (int32_t *)LT__REALLOC(tk->spec, (size_t)(tk->nspec + 1) * sizeof(int32_t));
    if (!p) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok: out of memory for special tokens"); return 0; }
    tk->spec = p;
    for (k = tk->nspec; k > 0 && tk->len[p[k - 1]] < tk->len[id]; k--) p[k] = p[k - 1];   /* longest first */
    p[k] = id;
    tk->nspec++;
    tk->special[id] = 1;
    tk->sfirst[(unsigned char)tk->bytes[tk->off[id]]] = 1;
    return 1;
}

/* Enters token entry e (its id is free) into the id arrays and the vocabulary hash. */
static int lt__tok_enter(lt_tokenizer *tk, const char *fn, const char *label, size_t e) {
    int32_t id = tk->ent[4 * e], other;
    size_t i;
    char sa[80], sb[80];
    const unsigned char *b = (const unsigned char *)tk->bytes + tk->ent[4 * e + 1];
    size_t n = (size_t)tk->ent[4 * e + 2];
    if (tk->len[id]) {
        if (tk->len[id] == n && !memcmp(tk->bytes + tk->off[id], b, n)) return 1;   /* an added token also in the vocabulary */
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: duplicate id %d: tokens \"%s\" and \"%s\"", fn, label, id,
                     lt__tok_show(tk, id, sa, sizeof sa), lt__tok_show_raw(b, n, sb, sizeof sb));
        return 0;
    }
    if ((other = lt_tok_lookup(tk, (const char *)b, n)) >= 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: token \"%s\" appears twice (ids %d and %d)", fn, label,
                     lt__tok_show_raw(b, n, sa, sizeof sa), other, id);
        return 0;
    }
    tk->off[id] = (uint32_t)tk->ent[4 * e + 1];
    tk->len[id] = (uint32_t)n;
    for (i = lt__tok_hash(b, n) & tk->vmask; tk->vslot[i] >= 0; i = (i + 1) & tk->vmask) {}
    tk->vslot[i] = id;
    tk->ntokens++;
    return 1;
}

/* From the tokens read: the id-indexed arrays, the vocabulary hash, the byte tokens, the special
   tokens.  Ids must be unique and below 2 * tokens + 256 (vocabularies are numbered densely from
   0; the bound keeps a number in a file from sizing memory). */
static int lt__tok_index(lt_tokenizer *tk, const char *fn, const char *label) {
    size_t e, vcap = 16, i;
    int64_t maxid = -1, bound = 2 * (int64_t)tk->nent + 256;
    for (e = 0; e < tk->nent; e++) if (tk->ent[4 * e] > maxid) maxid = tk->ent[4 * e];
    if (maxid >= bound) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: a token has id %lld, but there are only %zu tokens (ids must be "
                     "below 2 * tokens + 256 = %lld)", fn, label, (long long)maxid, tk->nent, (long long)bound);
        return 0;
    }
    tk->nvocab = (int32_t)(maxid + 1);
    while (vcap < 2 * tk->nent) vcap *= 2;
    tk->off = (uint32_t *)LT__MALLOC((size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    tk->len = (uint32_t *)LT__MALLOC((size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    tk->special = (unsigned char *)LT__MALLOC((size_t)tk->nvocab + 1);
    tk->vslot = (int32_t *)LT__MALLOC(vcap * sizeof(int32_t));
    if (!tk->off || !tk->len || !tk->special || !tk->vslot) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for %d tokens", fn, label, tk->nvocab);
        return 0;
    }
    memset(tk->len, 0, (size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    memset(tk->off, 0, (size_t)(tk->nvocab + 1) * sizeof(uint32_t));
    memset(tk->special, 0, (size_t)tk->nvocab + 1);
    memset(tk->vslot, 0xff, vcap * sizeof(int32_t));
    tk->vmask = vcap - 1;
    for (e = 0; e < tk->nent; e++)
        if (!lt__tok_enter(tk, fn, label, e)) return 0;
    for (e = 0; e < tk->nent; e++)
        if (tk->ent[4 * e + 3] && !lt__tok_mark_special(tk, tk->ent[4 * e])) return 0;
    for (i = 0; i < 256; i++) {
        char c = (char)i;
        if ((tk->byte_id[i] = lt_tok_lookup(tk, &c, 1)) < 0) {
            lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: no token for byte 0x%02x (U+%04X in vocabulary files): a "
                         "byte-level vocabulary needs all 256", fn, label, (unsigned)i, (unsigned)lt_tok_byte_char((int)i));
            return 0;
        }
    }
    LT__FREE(tk->ent);
    tk->ent = NULL;
    tk->nent = tk->capent = 0;
    return 1;
}

/* Adds the next merge (rank = merges so far) of the tokens a = m[0..na) and b = m[na..na+nb):
   both must be tokens, and so must their concatenation m[0..na+nb).  where: the line or item. */
static int lt__tok_add_merge(lt_tokenizer *tk, const char *fn, const char *label, const char *where,
                             const unsigned char *m, size_t na, size_t nb) {
    int32_t ia = lt_tok_lookup(tk, (const char *)m, na), ib = lt_tok_lookup(tk, (const char *)m + na, nb), im, r, old;
    uint64_t key;
    size_t i;
    char sa[80], sb[80];
    if (ia < 0 || ib < 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: the merge names \"%s\", which is not a token", fn, label, where,
                     ia < 0 ? lt__tok_show_raw(m, na, sa, sizeof sa) : lt__tok_show_raw(m + na, nb, sa, sizeof sa));
        return 0;
    }
    if ((im = lt_tok_lookup(tk, (const char *)m, na + nb)) < 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: merging \"%s\" and \"%s\" makes no token of the vocabulary", fn,
                     label, where, lt__tok_show(tk, ia, sa, sizeof sa), lt__tok_show(tk, ib, sb, sizeof sb));
        return 0;
    }
    if ((size_t)(tk->nmerges + 1) * 2 > tk->mmask + 1) {   /* keep the table at most half full */
        size_t cap = tk->mslot ? (tk->mmask + 1) * 2 : 1024, k;
        lt__tok_mslot *t = (lt__tok_mslot *)LT__MALLOC(cap * sizeof *t), *o = tk->mslot;
        if (!t) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory for %d merges", fn, label, tk->nmerges); return 0; }
        for (k = 0; k < cap; k++) t[k].key = LT__TOK_NO_KEY;
        for (k = 0; o && k <= tk->mmask; k++) {
            if (o[k].key == LT__TOK_NO_KEY) continue;
            for (i = lt__tok_mix(o[k].key) & (cap - 1); t[i].key != LT__TOK_NO_KEY; i = (i + 1) & (cap - 1)) {}
            t[i] = o[k];
        }
        LT__FREE(o);
        tk->mslot = t;
        tk->mmask = cap - 1;
    }
    if ((r = lt__tok_rank(tk, ia, ib, &old)) >= 0) {
        lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: %s: the merge \"%s\" + \"%s\" repeats merge %d", fn, label, where,
                     lt__tok_show(tk, ia, sa, sizeof sa), lt__tok_show(tk, ib, sb, sizeof sb), r);
        return 0;
    }
    key = (uint64_t)(uint32_t)ia << 32 | (uint32_t)ib;
    for (i = lt__tok_mix(key) & tk->mmask; tk->mslot[i].key != LT__TOK_NO_KEY; i = (i + 1) & tk->mmask) {}
    tk->mslot[i].key = key;
    tk->mslot[i].rank = tk->nmerges++;
    tk->mslot[i].id = im;
    return 1;
}

/* A byte-level string s[0..n) (UTF-8) to raw bytes in out (room for n); its length, or SIZE_MAX
   with *bad the first character outside the alphabet. */
static size_t lt__tok_unbyte(const unsigned char *s, size_t n, unsigned char *out, uint32_t *bad) {
    size_t i = 0, o = 0;
    while (i < n) {
        uint32_t cp;
        int b;
        i += lt__tok_utf8(s + i, n - i, &cp);
        if ((b = lt_tok_char_byte(cp)) < 0) { *bad = cp; return SIZE_MAX; }
        out[o++] = (unsigned char)b;
    }
    return o;
}
/* The string just read (j->str) unbyted into tk->pair[at..]; its length, or SIZE_MAX on an error. */
static size_t lt__tok_unbyte_str(lt__tj *j, lt_tokenizer *tk, const char *s, size_t n, size_t at, const char *what) {
    uint32_t bad = 0;
    size_t k;
    if (!lt__tok_grow((void **)&tk->pair, &tk->cappair, at + n + 1, 1)) {
        lt_set_error(j->ctx, LT_ERR_NOMEM, "%s: %s: out of memory", j->fn, j->label);
        return SIZE_MAX;
    }
    if ((k = lt__tok_unbyte((const unsigned char *)s, n, tk->pair + at, &bad)) == SIZE_MAX)
        lt__tj_fail(j, "%s \"%.60s\" holds the character U+%04X, which is not in the byte-level alphabet", what, s,
                    (unsigned)bad);
    return k;
}

/* A vocabulary object {"token": id, ...} at the cursor (entered later by lt__tok_index). */
static int lt__tok_read_vocab(lt__tj *j, lt_tokenizer *tk) {
    int64_t k = 0, id;
    if (!lt__tj_expect(j, '{', "'{' (the vocabulary: an object of token: id)")) return 0;
    while (lt__tj_member(j, &k)) {
        size_t n = lt__tok_unbyte_str(j, tk, j->str, j->slen, 0, "token");
        int c = lt__tj_peek(j);
        if (n == SIZE_MAX) return 0;
        if (c != '-' && (c < '0' || c > '9')) return lt__tj_fail(j, "token \"%.60s\": its id must be an integer", j->str);
        if (!lt__tj_int(j, &id) || !lt__tok_add(tk, j->fn, j->label, tk->pair, n, id, j->str, 0)) return 0;
    }
    if (lt_failed(j->ctx)) return 0;
    if (k == 0) return lt__tj_fail(j, "the vocabulary is empty");
    return 1;
}

/* vocab.bpe: one merge per line, two byte-level tokens separated by one space, in rank order;
   "#version" lines and blank lines are passed over. */
static int lt__tok_read_bpe(lt_tokenizer *tk, const char *fn, const char *label, const unsigned char *s, size_t n) {
    size_t i = 0, line = 0;
    char where[64], shown[80];
    while (i < n) {
        size_t st = i, e, sp, na, nb;
        uint32_t bad = 0;
        line++;
        while (i < n && s[i] != '\n') i++;
        e = i;
        if (i < n) i++;
        if (e > st && s[e - 1] == '\r') e--;
        if (e == st || (e - st >= 8 && !memcmp(s + st, "#version", 8))) continue;
        for (sp = st; sp < e && s[sp] != ' '; sp++) {}
        if (sp == st || sp + 1 >= e || memchr(s + sp + 1, ' ', e - sp - 1)) {
            lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: \"%s\" is not two tokens separated by one space", fn,
                         label, line, lt__tok_show_raw(s + st, e - st, shown, sizeof shown));
            return 0;
        }
        if (!lt__tok_grow((void **)&tk->pair, &tk->cappair, e - st, 1)) {
            lt_set_error(tk->ctx, LT_ERR_NOMEM, "%s: %s: out of memory", fn, label);
            return 0;
        }
        na = lt__tok_unbyte(s + st, sp - st, tk->pair, &bad);
        nb = na == SIZE_MAX ? na : lt__tok_unbyte(s + sp + 1, e - sp - 1, tk->pair + na, &bad);
        if (nb == SIZE_MAX) {
            if (bad == LT__TOK_BAD)
                lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: invalid UTF-8", fn, label, line);
            else
                lt_set_error(tk->ctx, LT_ERR_FORMAT, "%s: %s: line %zu: \"%s\" holds the character U+%04X, which is not in "
                             "the byte-level alphabet", fn, label, line, lt__tok_show_raw(s + st, e - st, shown, sizeof shown),
                             (unsigned)bad);
            return 0;
        }
        snprintf(where, sizeof where, "line %zu", line);
        if (!lt__tok_add_merge(tk, fn, label, where, tk->pair, na, nb)) return 0;
    }
    return 1;
}

/* Loading done: scratch of loading freed, the token bytes trimmed to size. */
static lt_tokenizer *lt__tok_done(lt_tokenizer *tk) {
    char *b;
    LT__FREE(tk->pair);
    tk->pair = NULL;
    tk->cappair = 0;
    if (tk->nbytes && (b = (char *)LT__REALLOC(tk->bytes, tk->nbytes)) != NULL) { tk->bytes = b; tk->capbytes = tk->nbytes; }
    if (!tk->mslot) {   /* no merges: an empty table still answers lookups */
        tk->mslot = (lt__tok_mslot *)LT__MALLOC(2 * sizeof *tk->mslot);
        if (!tk->mslot) { lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok: out of memory"); lt_tok_free(tk); return NULL; }
        tk->mslot[0].key = tk->mslot[1].key = LT__TOK_NO_KEY;
        tk->mmask = 1;
    }
    return tk;
}

static lt_tokenizer *lt__tok_gpt2(lt_ctx *ctx, const char *fn, const void *enc, size_t enc_size, const char *enc_label,
                                  const void *bpe, size_t bpe_size, const char *bpe_label) {
    lt_tokenizer *tk;
    lt__tj j;
    int32_t eot;
    int ok;
    if (!ctx || lt_failed(ctx)) return NULL;
    if ((!enc && enc_size) || (!bpe && bpe_size)) { lt_set_error(ctx, LT_ERR_ARG, "%s: a NULL buffer", fn); return NULL; }
    if (!(tk = lt__tok_new(ctx))) return NULL;
    memset(&j, 0, sizeof j);
    j.ctx = ctx; j.fn = fn; j.label = enc_label; j.s = (const unsigned char *)enc; j.n = enc_size;
    ok = lt__tok_read_vocab(&j, tk);
    if (ok && lt__tj_peek(&j) >= 0) ok = lt__tj_fail(&j, "more text after the vocabulary object");
    LT__FREE(j.str);
    if (!ok || !lt__tok_index(tk, fn, enc_label) ||
        !lt__tok_read_bpe(tk, fn, bpe_label, (const unsigned char *)bpe, bpe_size)) {
        lt_tok_free(tk);
        return NULL;
    }
    if ((eot = lt_tok_lookup(tk, "<|endoftext|>", 13)) >= 0 && !lt__tok_mark_special(tk, eot)) { lt_tok_free(tk); return NULL; }
    tk->pat = LT_PRETOK_GPT2;
    return lt__tok_done(tk);
}

LTRAIN_DEF lt_tokenizer *lt_tok_parse_gpt2(lt_ctx *ctx, const void *encoder_json, size_t enc_size,
                                           const void *vocab_bpe, size_t bpe_size, const char *label) {
    char a[300], b[300];
    snprintf(a, sizeof a, "%s (encoder.json)", label ? label : "memory");
    snprintf(b, sizeof b, "%s (vocab.bpe)", label ? label : "memory");
    return lt__tok_gpt2(ctx, "lt_tok_parse_gpt2", encoder_json, enc_size, a, vocab_bpe, bpe_size, b);
}

LTRAIN_DEF lt_tokenizer *lt_tok_load_gpt2(lt_ctx *ctx, const char *encoder_json, const char *vocab_bpe) {
    void *e = NULL, *b = NULL;
    size_t ne = 0, nb = 0;
    lt_tokenizer *tk = NULL;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!encoder_json || !vocab_bpe) { lt_set_error(ctx, LT_ERR_ARG, "lt_tok_load_gpt2: a NULL path"); return NULL; }
    if (lt_read_file(ctx, encoder_json, &e, &ne) == LT_OK && lt_read_file(ctx, vocab_bpe, &b, &nb) == LT_OK)
        tk = lt__tok_gpt2(ctx, "lt_tok_load_gpt2", e, ne, encoder_json, b, nb, vocab_bpe);
    lt_free(e);
    lt_free(b);
    return tk;
}

/* The pre-tokenizer regexes of tokenizer.json files this library implements (as JSON unescapes them). */
static const struct { const char *re; lt_pretok p; } lt__tok_known_re[] = {
    {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", LT_PRETOK_GPT2},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_CL100K},
    {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|\\s*[\\r\\n]|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_CL100K},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
     "\\s+(?!\\S)|\\s+", LT_PRETOK_QWEN2},
};

/* The string member at offset `at` (0: absent -> def) into buf; 0 on an error. */
static int lt__tj_str_at(lt__tj *j, size_t at, const char *def, char *buf, size_t cap, const char *what) {
    if (!at) { snprintf(buf, cap, "%s", def); return 1; }
    j->i = at;
    if (lt__tj_peek(j) != '"') return lt__tj_fail(j, "%s must be a string", what);
    if (!lt__tj_string(j)) return 0;
    snprintf(buf, cap, "%s", j->str);
    return 1;
}
/* The bool member at `at` (0: absent -> def). */
static int lt__tj_bool_at(lt__tj *j, size_t at, int def, int *b, const char *what) {
    *b = def;
    if (!at) return 1;
    j->i = at;
    if (lt__tj_peek(j) != 't' && lt__tj_peek(j) != 'f') return lt__tj_fail(j, "%s must be true or false", what);
    return lt__tj_bool(j, b);
}

/* model.merges: "a b" strings or ["a", "b"] pairs, in rank order. */
static int lt__tok_json_merges(lt__tj *j, lt_tokenizer *tk) {
    int64_t k = 0;
    char where[64];
    if (!lt__tj_expect(j, '[', "'[' (model.merges)")) return 0;
    while (lt__tj_item(j, &k)) {
        size_t na, nb, sp;
        snprintf(where, sizeof where, "merge %lld", (long long)(k - 1));
        if (lt__tj_peek(j) == '"') {
            if (!lt__tj_string(j)) return 0;
            for (sp = 0; sp < j->slen && j->str[sp] != ' '; sp++) {}
            if (sp == 0 || sp + 1 >= j->slen || memchr(j->str + sp + 1, ' ', j->slen - sp - 1))
                return lt__tj_fail(j, "%s \"%.60s\" is not two tokens separated by one space", where, j->str);
            na = lt__tok_unbyte_str(j, tk, j->str, sp, 0, "merge token");
            nb = na == SIZE_MAX ? na : lt__tok_unbyte_str(j, tk, j->str + sp + 1, j->slen - sp - 1, na, "merge token");
        } else {
            int64_t q = 0;
            na = nb = SIZE_MAX;
            if (!lt__tj_expect(j, '[', "a merge: \"a b\" or [\"a\", \"b\"]")) return 0;
            if (!lt__tj_item(j, &q) || lt__tj_peek(j) != '"' || !lt__tj_string(j) ||
                (na = lt__tok_unbyte_str(j, tk, j->str, j->slen, 0, "merge token")) == SIZE_MAX)
                return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "%s: expected two strings", where);
            if (!lt__tj_item(j, &q) || lt__tj_peek(j) != '"' || !lt__tj_string(j) ||
                (nb = lt__tok_unbyte_str(j, tk, j->str, j->slen, na, "merge token")) == SIZE_MAX)
                return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "%s: expected two strings", where);
            if (lt__tj_item(j, &q)) return lt__tj_fail(j, "%s: more than two strings", where);
        }
        if (na == SIZE_MAX || nb == SIZE_MAX || lt_failed(j->ctx)) return 0;
        if (na == 0 || nb == 0) return lt__tj_fail(j, "%s names the empty token", where);
        if (!lt__tok_add_merge(tk, j->fn, j->label, where, tk->pair, na, nb)) return 0;
    }
    return !lt_failed(j->ctx);
}

/* added_tokens: [{"id": N, "content": "text", ...}, ...]: the special tokens (raw text, not the
   byte-level alphabet).  lstrip / rstrip / single_word / normalized are not applied. */
static int lt__tok_json_added(lt__tj *j, lt_tokenizer *tk) {
    static const char *const names[2] = {"id", "content"};
    int64_t k = 0, id;
    size_t at[2], end;
    if (!lt__tj_expect(j, '[', "'[' (added_tokens)")) return 0;
    while (lt__tj_item(j, &k)) {
        if (!lt__tj_fields(j, "'{' (an added token)", names, 2, at)) return 0;
        end = j->i;
        if (!at[0] || !at[1]) return lt__tj_fail(j, "added token %lld has no %s", (long long)(k - 1), at[0] ? "content" : "id");
        j->i = at[0];
        if (!lt__tj_int(j, &id)) return 0;
        j->i = at[1];
        if (lt__tj_peek(j) != '"') return lt__tj_fail(j, "added token %lld: content must be a string", (long long)(k - 1));
        if (!lt__tj_string(j) || !lt__tok_add(tk, j->fn, j->label, (const unsigned char *)j->str, j->slen, id, j->str, 1))
            return 0;
        j->i = end;
    }
    return !lt_failed(j->ctx);
}

/* pre_tokenizer: ByteLevel (use_regex: GPT-2's pattern), or a Sequence of a Split on a known
   pattern followed by a ByteLevel without regex.  *state: 1 after a Split, 2 after the ByteLevel. */
static int lt__tok_json_pretok(lt__tj *j, lt_tokenizer *tk, size_t at, int depth, int *state) {
    static const char *const names[7] = {"type", "pretokenizers", "pattern", "behavior", "invert", "add_prefix_space",
                                         "use_regex"};
    size_t f[7], pf[2];
    char type[64], buf[64];
    int b, use_regex;
    size_t r;
    j->i = at;
    if (lt__tj_is_null(j)) return lt__tj_fail(j, "pre_tokenizer is null: a byte-level BPE needs ByteLevel");
    if (!lt__tj_fields(j, "'{' (pre_tokenizer)", names, 7, f) || !lt__tj_str_at(j, f[0], "", type, sizeof type, "pre_tokenizer.type"))
        return 0;
    if (!strcmp(type, "Sequence") && depth == 0) {
        int64_t k = 0;
        if (!f[1]) return lt__tj_fail(j, "a Sequence pre_tokenizer without pretokenizers");
        j->i = f[1];
        if (!lt__tj_expect(j, '[', "'[' (pretokenizers)")) return 0;
        while (lt__tj_item(j, &k)) {
            size_t item = j->i;
            if (!lt__tj_skip(j, 1)) return 0;
            r = j->i;
            if (!lt__tok_json_pretok(j, tk, item, 1, state)) return 0;
            j->i = r;
        }
        return !lt_failed(j->ctx);
    }
    if (!strcmp(type, "ByteLevel")) {
        if (*state == 2) return lt__tj_fail(j, "two ByteLevel pre-tokenizers");
        if (!lt__tj_bool_at(j, f[5], 1, &b, "add_prefix_space") || !lt__tj_bool_at(j, f[6], 1, &use_regex, "use_regex")) return 0;
        if (b) return lt__tj_fail(j, "ByteLevel with add_prefix_space true is not supported");
        if (use_regex == (*state == 1))
            return lt__tj_fail(j, use_regex ? "ByteLevel with use_regex true after a Split is not supported"
                                            : "ByteLevel without use_regex and without a Split before it cuts nothing");
        if (use_regex) tk->pat = LT_PRETOK_GPT2;
        *state = 2;
        return 1;
    }
    if (!strcmp(type, "Split") && *state == 0) {
        static const char *const pn[2] = {"Regex", "String"};
        if (!lt__tj_str_at(j, f[3], "Isolated", buf, sizeof buf, "Split.behavior") || !lt__tj_bool_at(j, f[4], 0, &b, "Split.invert"))
            return 0;
        if (strcmp(buf, "Isolated") || b) return lt__tj_fail(j, "a Split with behavior %s%s is not supported", buf, b ? ", invert" : "");
        if (!f[2]) return lt__tj_fail(j, "a Split without a pattern");
        j->i = f[2];
        if (!lt__tj_fields(j, "'{' (Split.pattern)", pn, 2, pf)) return 0;
        if (!pf[0]) return lt__tj_fail(j, "a Split on a String pattern is not supported (only the regexes of lt_pretok)");
        j->i = pf[0];
        if (lt__tj_peek(j) != '"' || !lt__tj_string(j)) return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "Split.pattern.Regex must be a string");
        for (r = 0; r < sizeof lt__tok_known_re / sizeof lt__tok_known_re[0]; r++)
            if (!strcmp(j->str, lt__tok_known_re[r].re)) break;
        if (r == sizeof lt__tok_known_re / sizeof lt__tok_known_re[0])
            return lt__tj_fail(j, "the Split regex \"%.200s\" is not one of the patterns of lt_pretok", j->str);
        tk->pat = lt__tok_known_re[r].p;
        *state = 1;
        return 1;
    }
    return lt__tj_fail(j, "pre_tokenizer %s%s is not supported (ByteLevel, or a Split then a ByteLevel)", type,
                       depth ? " inside a Sequence" : "");
}

/* model: a BPE with vocab and merges; the options that change encoding must be off. */
static int lt__tok_json_model(lt__tj *j, lt_tokenizer *tk, size_t at, size_t added) {
    static const char *const names[8] = {"type", "vocab", "merges", "ignore_merges", "byte_fallback",
                                         "continuing_subword_prefix", "end_of_word_suffix", "dropout"};
    size_t f[8];
    char type[64], buf[64];
    int b, k;
    j->i = at;
    if (!lt__tj_fields(j, "'{' (model)", names, 8, f) || !lt__tj_str_at(j, f[0], "BPE", type, sizeof type, "model.type")) return 0;
    if (strcmp(type, "BPE")) return lt__tj_fail(j, "model.type is \"%s\": only BPE models are supported", type);
    if (!f[1]) return lt__tj_fail(j, "model has no vocab");
    if (!lt__tj_bool_at(j, f[3], 0, &tk->direct, "model.ignore_merges") || !lt__tj_bool_at(j, f[4], 0, &b, "model.byte_fallback"))
        return 0;
    if (b) return lt__tj_fail(j, "model.byte_fallback true is not supported (a byte-level BPE needs none)");
    for (k = 5; k < 8; k++) {
        j->i = f[k];
        if (!f[k] || lt__tj_is_null(j)) continue;
        if (k == 7 || !lt__tj_str_at(j, f[k], "", buf, sizeof buf, names[k]) || buf[0])
            return lt_failed(j->ctx) ? 0 : lt__tj_fail(j, "model.%s is set: not supported", names[k]);
    }
    j->i = f[1];
    if (!lt__tok_read_vocab(j, tk)) return 0;
    j->i = added;
    if (added && !lt__tj_is_null(j) && !lt__tok_json_added(j, tk)) return 0;
    if (!lt__tok_index(tk, j->fn, j->label)) return 0;
    j->i = f[2];
    return !f[2] || lt__tok_json_merges(j, tk);
}

static lt_tokenizer *lt__tok_json(lt_ctx *ctx, const char *fn, const void *buf, size_t size, const char *label) {
    static const char *const names[4] = {"model", "added_tokens", "pre_tokenizer", "normalizer"};
    size_t f[4];
    char type[64];
    lt_tokenizer *tk;
    lt__tj j;
    int ok, state = 0;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!buf && size) { lt_set_error(ctx, LT_ERR_ARG, "%s: a NULL buffer", fn); return NULL; }
    if (!(tk = lt__tok_new(ctx))) return NULL;
    memset(&j, 0, sizeof j);
    j.ctx = ctx; j.fn = fn; j.label = label ? label : "memory"; j.s = (const unsigned char *)buf; j.n = size;
    ok = lt__tj_fields(&j, "'{' (a tokenizer.json object)", names, 4, f);
    if (ok && lt__tj_peek(&j) >= 0) ok = lt__tj_fail(&j, "more text after the tokenizer object");
    if (ok && !f[0]) ok = lt__tj_fail(&j, "no model");
    if (ok && f[3]) {
        j.i = f[3];
        if (!lt__tj_is_null(&j)) {
            static const char *const tn[1] = {"type"};
            size_t t;
            if (lt__tj_fields(&j, "'{' (normalizer)", tn, 1, &t) && lt__tj_str_at(&j, t, "?", type, sizeof type, "normalizer.type"))
                lt__tj_fail(&j, "normalizer %s is not supported (only null)", type);
            ok = 0;
        }
    }
    ok = ok && lt__tok_json_model(&j, tk, f[0], f[1]);
    if (ok && !f[2]) ok = lt__tj_fail(&j, "no pre_tokenizer: a byte-level BPE needs ByteLevel");
    ok = ok && lt__tok_json_pretok(&j, tk, f[2], 0, &state);
    if (ok && state != 2) ok = lt__tj_fail(&j, "a Split without the ByteLevel after it");
    LT__FREE(j.str);
    if (!ok) { lt_tok_free(tk); return NULL; }
    return lt__tok_done(tk);
}

LTRAIN_DEF lt_tokenizer *lt_tok_parse_json(lt_ctx *ctx, const void *buf, size_t size, const char *label) {
    return lt__tok_json(ctx, "lt_tok_parse_json", buf, size, label);
}

LTRAIN_DEF lt_tokenizer *lt_tok_load_json(lt_ctx *ctx, const char *tokenizer_json) {
    void *b = NULL;
    size_t n = 0;
    lt_tokenizer *tk = NULL;
    if (!ctx || lt_failed(ctx)) return NULL;
    if (!tokenizer_json) { lt_set_error(ctx, LT_ERR_ARG, "lt_tok_load_json: a NULL path"); return NULL; }
    if (lt_read_file(ctx, tokenizer_json, &b, &n) == LT_OK) tk = lt__tok_json(ctx, "lt_tok_load_json", b, n, tokenizer_json);
    lt_free(b);
    return tk;
}

LTRAIN_DEF int32_t lt_tok_vocab_size(const lt_tokenizer *tk) { return tk ? tk->nvocab : 0; }
LTRAIN_DEF int32_t lt_tok_num_merges(const lt_tokenizer *tk) { return tk ? tk->nmerges : 0; }
LTRAIN_DEF lt_pretok lt_tok_pattern(const lt_tokenizer *tk) { return tk ? tk->pat : LT_PRETOK_GPT2; }
LTRAIN_DEF const char *lt_tok_token(const lt_tokenizer *tk, int32_t id, size_t *len) {
    if (len) *len = 0;
    if (!tk || id < 0 || id >= tk->nvocab || !tk->len[id]) return NULL;
    if (len) *len = tk->len[id];
    return tk->bytes + tk->off[id];
}
LTRAIN_DEF int32_t lt_tok_special(const lt_tokenizer *tk, const char *s) {
    int k;
    size_t n = s ? strlen(s) : 0;
    for (k = 0; tk && s && k < tk->nspec; k++)
        if (tk->len[tk->spec[k]] == n && !memcmp(tk->bytes + tk->off[tk->spec[k]], s, n)) return tk->spec[k];
    return -1;
}
LTRAIN_DEF int32_t lt_tok_merge(const lt_tokenizer *tk, int32_t a, int32_t b, int32_t *rank) {
    int32_t id = -1, r = -1;
    if (tk && a >= 0 && b >= 0) r = lt__tok_rank(tk, a, b, &id);
    if (rank) *rank = r;
    return r >= 0 ? id : -1;
}
LTRAIN_DEF size_t lt_tok_memory(const lt_tokenizer *tk) {
    if (!tk) return 0;
    return sizeof *tk + tk->capbytes + (size_t)(tk->nvocab + 1) * (2 * sizeof(uint32_t) + 1) +
           (tk->vmask + 1) * sizeof(int32_t) + (tk->mmask + 1) * sizeof(lt__tok_mslot) + (size_t)tk->nspec * sizeof(int32_t) +
           (tk->cache ? LT__TOK_CSLOTS * sizeof(lt__tok_centry) : 0) + tk->scap * 9 * sizeof(int32_t);
}

/* ---- @@TOK.encode  BPE encoding ---------------------------------------------------------------- */
#define LT__TOK_SMALL 48   /* pre-tokens up to this many bytes merge by scanning; longer ones by a heap */

/* BPE of the n >= 2 tokens in sym: merges in place, returns the new count.  rk[i] holds the rank of
   the pair (sym[i], sym[i+1]) and to[i] its merged token; each step merges the lowest rank (the
   leftmost of equals), as tiktoken's byte_pair_merge and HF's BPE word merging.  O(n^2). */
static int64_t lt__tok_bpe_scan(const lt_tokenizer *tk, int32_t *sym, int32_t *rk, int32_t *to, int64_t n) {
    int64_t i, best;
    for (i = 0; i + 1 < n; i++) rk[i] = lt__tok_rank(tk, sym[i], sym[i + 1], &to[i]);
    for (;;) {
        best = -1;
        for (i = 0; i + 1 < n; i++)
            if (rk[i] >= 0 && (best < 0 || rk[i] < rk[best])) best = i;
        if (best < 0) return n;
        sym[best] = to[best];
        memmove(sym + best + 1, sym + best + 2, (size_t)(n - best - 2) * sizeof *sym);
        if (n - best - 3 > 0) {
            memmove(rk + best + 1, rk + best + 2, (size_t)(n - best - 3) * sizeof *rk);
            memmove(to + best + 1, to + best + 2, (size_t)(n - best - 3) * sizeof *to);
        }
        n--;
        if (best > 0) rk[best - 1] = lt__tok_rank(tk, sym[best - 1], sym[best], &to[best - 1]);
        if (best + 1 < n) rk[best] = lt__tok_rank(tk, sym[best], sym[best + 1], &to[best]);
    }
}

/* A min-heap of (rank, position) pairs, stored as two int32 each. */
static int lt__tok_hless(const int32_t *h, int64_t a, int64_t b) {
    return h[2 * a] < h[2 * b] || (h[2 * a] == h[2 * b] && h[2 * a + 1] < h[2 * b + 1]);
}
static void lt__tok_hswap(int32_t *h, int64_t a, int64_t b) {
    int32_t r = h[2 * a], p = h[2 * a + 1];
    h[2 * a] = h[2 * b]; h[2 * a + 1] = h[2 * b + 1]; h[2 * b] = r; h[2 * b + 1] = p;
}
static void lt__tok_hpush(int32_t *h, int64_t *nh, int32_t rank, int32_t pos) {
    int64_t i = (*nh)++;
    h[2 * i] = rank; h[2 * i + 1] = pos;
    while (i > 0 && lt__tok_hless(h, i, (i - 1) / 2)) { lt__tok_hswap(h, i, (i - 1) / 2); i = (i - 1) / 2; }
}
static void lt__tok_hpop(int32_t *h, int64_t *nh) {
    int64_t i = 0, n = --(*nh);
    h[0] = h[2 * n]; h[1] = h[2 * n + 1];
    for (;;) {
        int64_t l = 2 * i + 1, m = i;
        if (l < n && lt__tok_hless(h, l, m)) m = l;
        if (l + 1 < n && lt__tok_hless(h, l + 1, m)) m = l + 1;
        if (m == i) return;
        lt__tok_hswap(h, i, m);
        i = m;
    }
}

/* The same merges as lt__tok_bpe_scan in O(n log n): symbols in a linked list (nx, pv), candidate
   pairs in a heap keyed (rank, position of the left symbol); a popped pair whose symbols changed
   since it was pushed no longer has that rank and is dropped.  heap: room for 3n entries. */
static int64_t lt__tok_bpe_heap(const lt_tokenizer *tk, int32_t *sym, int32_t *nx, int32_t *pv, int32_t *heap, int64_t n) {
    int64_t nh = 0, i, o;
    int32_t id, r;
    for (i = 0; i < n; i++) { nx[i] = i + 1 < n ? (int32_t)(i + 1) : -1; pv[i] = (int32_t)(i - 1); }
    for (i = 0; i + 1 < n; i++)
        if ((r = lt__tok_rank(tk, sym[i], sym[i + 1], &id)) >= 0) lt__tok_hpush(heap, &nh, r, (int32_t)i);
    while (nh > 0) {
        int32_t rank = heap[0], p = heap[1], q = nx[p];
        lt__tok_hpop(heap, &nh);
        if (sym[p] < 0 || q < 0 || lt__tok_rank(tk, sym[p], sym[q], &id) != rank) continue;
        sym[p] = id;
        sym[q] = -1;
        nx[p] = nx[q];
        if (nx[q] >= 0) pv[nx[q]] = p;
        if (pv[p] >= 0 && (r = lt__tok_rank(tk, sym[pv[p]], sym[p], &id)) >= 0) lt__tok_hpush(heap, &nh, r, pv[p]);
        if (nx[p] >= 0 && (r = lt__tok_rank(tk, sym[p], sym[nx[p]], &id)) >= 0) lt__tok_hpush(heap, &nh, r, p);
    }
    for (i = 0, o = 0; i < n; i++) if (sym[i] >= 0) sym[o++] = sym[i];
    return o;
}

/* Scratch for a pre-token of n bytes. */
static int lt__tok_scratch(lt_tokenizer *tk, size_t n) {
    size_t cap = tk->scap ? tk->scap : 256;
    int32_t *a, *b, *c, *h;
    if (n <= tk->scap) return 1;
    while (cap < n) {
        if (cap > (size_t)INT32_MAX / 8) {
            lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_encode: a pre-token of %zu bytes is too long (at most 2^28)", n);
            return 0;
        }
        cap *= 2;
    }
    a = (int32_t *)LT__REALLOC(tk->sym, cap * sizeof(int32_t));
    if (a) tk->sym = a;
    b = (int32_t *)LT__REALLOC(tk->aux1, cap * sizeof(int32_t));
    if (b) tk->aux1 = b;
    c = (int32_t *)LT__REALLOC(tk->aux2, cap * sizeof(int32_t));
    if (c) tk->aux2 = c;
    h = (int32_t *)LT__REALLOC(tk->heap, cap * 6 * sizeof(int32_t));
    if (h) tk->heap = h;
    if (!a || !b || !c || !h) {
        lt_set_error(tk->ctx, LT_ERR_NOMEM, "lt_tok_encode: out of memory for a pre-token of %zu bytes", n);
        return 0;
    }
    tk->scap = cap;
    return 1;
}

/* The ids of one pre-token s[0..n) into sym (tk->sym when it returns > 0 and *ids not set);
   returns their count, or -1 on an error. */
static int64_t lt__tok_piece(lt_tokenizer *tk, const unsigned char *s, size_t n, const int32_t **ids) {
    lt__tok_centry *e = NULL;
    uint64_t h = 0;
    int64_t m, i;
    int32_t id;
    if (n == 1) { *ids = &tk->byte_id[s[0]]; return 1; }
    if (tk->cache && n <= LT__TOK_CKEY) {
        h = lt__tok_hash(s, n);
        e = &tk->cache[h & (LT__TOK_CSLOTS - 1)];
        if (e->hash == h && e->len == n && !memcmp(e->key, s, n)) { *ids = e->ids; return e->nids; }
    }
    if (!lt__tok_scratch(tk, n)) return -1;
    if (tk->direct && (id = lt_tok_lookup(tk, (const char *)s, n)) >= 0 && !tk->special[id]) {
        tk->sym[0] = id;
        m = 1;
    } else {
        for (i = 0; i < (int64_t)n; i++) tk->sym[i] = tk->byte_id[s[i]];
        m = n <= LT__TOK_SMALL ? lt__tok_bpe_scan(tk, tk->sym, tk->aux1, tk->aux2, (int64_t)n)
                               : lt__tok_bpe_heap(tk, tk->sym, tk->aux1, tk->aux2, tk->heap, (int64_t)n);
    }
    if (e && m <= LT__TOK_CIDS) {
        e->hash = h;
        e->len = (uint8_t)n;
        e->nids = (uint8_t)m;
        memcpy(e->key, s, n);
        memcpy(e->ids, tk->sym, (size_t)m * sizeof(int32_t));
    }
    *ids = tk->sym;
    return m;
}

/* Encodes s[0..n) (no special tokens in it) from out[*count]; 0 on an error. */
static int lt__tok_stretch(lt_tokenizer *tk, const unsigned char *s, size_t n, int32_t *out, int64_t cap, int64_t *count) {
    size_t i = 0, k;
    while (i < n) {
        const int32_t *ids = NULL;
        int64_t m, c;
        switch (tk->pat) {
        case LT_PRETOK_CL100K: k = lt__pretok_cl100k(s + i, n - i, 3); break;
        case LT_PRETOK_QWEN2: k = lt__pretok_cl100k(s + i, n - i, 1); break;
        default: k = lt__pretok_gpt2(s + i, n - i); break;
        }
        if ((m = lt__tok_piece(tk, s + i, k, &ids)) < 0) return 0;
        for (c = 0; c < m; c++, (*count)++)
            if (*count < cap) out[*count] = ids[c];
        i += k;
    }
    return 1;
}

/* The special token at s[0..n) (the longest one), or -1. */
static int32_t lt__tok_special_at(const lt_tokenizer *tk, const unsigned char *s, size_t n) {
    int k;
    if (!tk->sfirst[s[0]]) return -1;
    for (k = 0; k < tk->nspec; k++) {
        int32_t id = tk->spec[k];
        if (tk->len[id] <= n && !memcmp(tk->bytes + tk->off[id], s, tk->len[id])) return id;
    }
    return -1;
}

LTRAIN_DEF int64_t lt_tok_encode(lt_tokenizer *tk, const char *text, size_t n, int flags, int32_t *out, int64_t cap) {
    const unsigned char *s = (const unsigned char *)text;
    int64_t count = 0;
    size_t i, start = 0;
    if (!tk) return -1;
    if ((!text && n) || cap < 0 || (!out && cap)) {
        lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_encode: text %s with n %zu, out %s with cap %lld", text ? "set" : "NULL", n,
                     out ? "set" : "NULL", (long long)cap);
        return -1;
    }
    if (n == 0) return 0;
    if (!tk->cache && (tk->cache = (lt__tok_centry *)LT__MALLOC(LT__TOK_CSLOTS * sizeof(lt__tok_centry))) != NULL)
        memset(tk->cache, 0, LT__TOK_CSLOTS * sizeof(lt__tok_centry));   /* len 0 never matches: n >= 2 */
    if ((flags & LT_TOK_SPECIAL) && tk->nspec) {
        for (i = 0; i < n; i++) {
            int32_t id = lt__tok_special_at(tk, s + i, n - i);
            if (id < 0) continue;
            if (!lt__tok_stretch(tk, s + start, i - start, out, cap, &count)) return -1;
            if (count < cap) out[count] = id;
            count++;
            i += tk->len[id] - 1;
            start = i + 1;
        }
    }
    if (!lt__tok_stretch(tk, s + start, n - start, out, cap, &count)) return -1;
    return count;
}

/* Where a text may be cut so that its pieces, encoded one by one, give the ids of the whole: at c
   (2 <= c < n) with s[c-1] a newline and s[c-2], s[c] ASCII letters or digits.  Under each pattern
   (GPT-2's, cl100k's, Qwen2's) that newline is a pre-token of its own whether or not the text goes
   on past it: no alternative joins a newline to a letter or digit before or after it (GPT-2's
   " ?\p{L}+" takes only a space before letters, cl100k's "[^\r\n\p{L}\p{N}]?\p{L}+" no newline;
   punctuation runs with their newlines, "\s*[\r\n]+" and "\s+(?!\S)" stop at a letter or digit).
   Why a letter or digit before it: GPT-2 cuts "a  \nb" as a|  |\n|b but "a  \n" alone as a|  \n
   (spaces before a newline join it at the end of a text).  The matches that end before the
   newline read no byte past it, and the matching from c on reads only s[c..].  A special-token
   string spans no such cut unless it holds a newline: with LT_TOK_SPECIAL and such a special
   token the text is encoded in one piece. */
static int lt__tok_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
/* The last cut of s[0..n) by the rule above, or 0 when it has none. */
static size_t lt__tok_last_cut(const unsigned char *s, size_t n) {
    size_t c;
    for (c = n - 1; n >= 3 && c >= 2; c--)
        if (s[c - 1] == '\n' && lt__tok_alnum(s[c]) && lt__tok_alnum(s[c - 2])) return c;
    return 0;
}

static int lt__tok_store_grow(lt_ctx *ctx, lt__store *st, size_t *cap, size_t need, const char *what) {
    if (!lt__tok_grow(&st->heap, cap, need, (size_t)st->esz))
        return lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %zu tokens", what, need), 0;
    st->p = (const unsigned char *)st->heap;
    return 1;
}

/* Encodes s[0..n) and appends its ids to st (room for cap tokens), through ids (room for n). */
static int lt__tok_store_piece(lt_ctx *ctx, lt_tokenizer *tk, int flags, const unsigned char *s, size_t n, int32_t *ids,
                               lt__store *st, size_t *cap, const char *what) {
    int64_t m = lt_tok_encode(tk, (const char *)s, n, flags, ids, (int64_t)n), i;
    if (m < 0) {
        if (tk->ctx != ctx) lt_set_error(ctx, lt_status_of(tk->ctx), "%s: %s", what, lt_error(tk->ctx));
        return 0;
    }
    if (!lt__tok_store_grow(ctx, st, cap, (size_t)(st->n + m), what)) return 0;
    if (st->esz == 4) memcpy((int32_t *)st->heap + st->n, ids, (size_t)m * sizeof(int32_t));
    else for (i = 0; i < m; i++) ((uint16_t *)st->heap)[st->n + i] = (uint16_t)ids[i];
    st->n += m;
    return 1;
}

/* The text at path encoded by tk into a store: read and encoded `piece` bytes at a time (a piece
   ends at the last cut of lt__tok_last_cut in it; one without any grows until it has one or the
   text ends), the ids kept as esz-byte integers (0: uint16 when the vocabulary has at most 65536
   tokens, else int32).  At most the data limit of bytes is read. */
static lt__store *lt__tok_store_file(lt_ctx *ctx, lt_tokenizer *tk, const char *path, int flags, size_t piece, int esz,
                                     const char *what) {
    lt__src src;
    lt__store *st;
    uint64_t limit, total = 0;
    unsigned char *buf = NULL, *q;
    int32_t *ids = NULL;
    size_t cap = piece, len = 0, tcap = 0, idcap = 0;
    int eof = 0, cuts = 1, k;
    if (lt__data_limit(ctx, &limit) != LT_OK || lt__src_open(ctx, &src, path) != LT_OK) return NULL;
    if (!(st = lt__store_new(ctx, what))) { lt__src_close(&src); return NULL; }
    st->esz = esz ? esz : lt_tok_vocab_size(tk) <= 65536 ? 2 : 4;
    snprintf(st->label, sizeof st->label, "%.250s", path);
    if (flags & LT_TOK_SPECIAL)
        for (k = 0; k < tk->nspec; k++)
            if (memchr(tk->bytes + tk->off[tk->spec[k]], '\n', tk->len[tk->spec[k]])) cuts = 0;
    if (src.regular && !lt__tok_store_grow(ctx, st, &tcap, (size_t)(src.size < limit ? src.size : limit) / 4 + 1, what))
        goto fail;
    for (;;) {
        size_t c;
        if (len == cap) {   /* no cut in a full buffer: a longer piece */
            if (!lt_mul_size(cap, 2, &cap) || !(q = (unsigned char *)LT__REALLOC(buf, cap))) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for a piece of %zu bytes", what, len);
                goto fail;
            }
            buf = q;
        } else if (!buf && !(buf = (unsigned char *)LT__MALLOC(cap))) {
            lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory", what);
            goto fail;
        }
        while (!eof && len < cap) {
            long long got = lt__src_read(&src, buf + len, cap - len);
            if (got < 0) { lt_set_error(ctx, LT_ERR_IO, "%s: read failed: %s", path, strerror(errno)); goto fail; }
            eof = got == 0;
            len += (size_t)got;
            total += (uint64_t)got;
            if (total > limit) {
                lt_set_error(ctx, LT_ERR_NOMEM, "%s: more than %llu bytes read without reaching the end: over the "
                             "data limit (an input that does not end, such as /dev/zero or an endless pipe? "
                             "LTRAIN_DATA_LIMIT=N[k|m|g] raises the limit)", path, (unsigned long long)limit);
                goto fail;
            }
        }
        c = eof ? len : cuts ? lt__tok_last_cut(buf, len) : 0;
        if (c == 0 && !eof) continue;
        if (c > idcap) {
            int32_t *w = (int32_t *)LT__REALLOC(ids, c * sizeof(int32_t));
            if (!w) { lt_set_error(ctx, LT_ERR_NOMEM, "%s: out of memory for %zu tokens", what, c); goto fail; }
            ids = w;
            idcap = c;
        }
        if (c && !lt__tok_store_piece(ctx, tk, flags, buf, c, ids, st, &tcap, what)) goto fail;
        if (eof) break;
        memmove(buf, buf + c, len - c);
        len -= c;
    }
    lt__src_close(&src);
    LT__FREE(buf);
    LT__FREE(ids);
    if (tcap > (size_t)st->n + 1 && (q = (unsigned char *)LT__REALLOC(st->heap, ((size_t)st->n + 1) * (size_t)st->esz)))
        st->heap = q, st->p = q;
    return st;
fail:
    lt__src_close(&src);
    LT__FREE(buf);
    LT__FREE(ids);
    lt__store_release(st);
    return NULL;
}

#define LT__TOK_PIECE ((size_t)1 << 18)   /* bytes encoded at a time by lt_loader_open_tok */
LTRAIN_DEF lt_loader *lt_loader_open_tok(lt_ctx *ctx, const char *path, lt_tokenizer *tk, int flags, int B, int T) {
    lt__store *st;
    char what[300];
    if (!path || !tk) {
        lt_set_error(ctx, LT_ERR_ARG, "lt_loader_open_tok: path is %s and tk is %s", path ? "given" : "NULL",
                     tk ? "given" : "NULL");
        return NULL;
    }
    if (!lt__loader_check_bt(ctx, "lt_loader_open_tok", B, T)) return NULL;
    snprintf(what, sizeof what, "lt_loader_open_tok: %.250s", path);
    if (!(st = lt__tok_store_file(ctx, tk, path, flags, LT__TOK_PIECE, 0, what))) return NULL;
    return lt__loader_make(ctx, st, B, T, what);
}

/* ---- @@TOK.decode  decoding -------------------------------------------------------------------- */
LTRAIN_DEF int64_t lt_tok_decode(const lt_tokenizer *tk, const int32_t *ids, int64_t n, char *out, size_t cap) {
    int64_t i;
    size_t size = 0;
    if (!tk) return -1;
    if ((!ids && n) || n < 0 || (!out && cap)) {
        lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_decode: ids %s with n %lld, out %s with cap %zu", ids ? "set" : "NULL",
                     (long long)n, out ? "set" : "NULL", cap);
        return -1;
    }
    for (i = 0; i < n; i++) {
        int32_t id = ids[i];
        size_t k;
        if (id < 0 || id >= tk->nvocab || !tk->len[id]) {
            lt_set_error(tk->ctx, LT_ERR_ARG, "lt_tok_decode: id %d at position %lld %s (vocab size %d)", id, (long long)i,
                         id < 0 || id >= tk->nvocab ? "is out of range" : "has no token", tk->nvocab);
            return -1;
        }
        k = tk->len[id];
        if (size < cap) memcpy(out + size, tk->bytes + tk->off[id], cap - size < k ? cap - size : k);
        size += k;
    }
    return (int64_t)size;
}
