/* ==== end: closes the implementation block; the licence ======================================= */

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT   /* the caller's contraction again (@@CORE) */
#elif defined(LT__GCC_CONTRACT_OFF)
#pragma GCC pop_options            /* (the same for gcc) */
#endif
#endif /* LTRAIN_IMPLEMENTATION */

/* ------------------------------------------------------------------------------------------------
   This software is available under 2 licenses -- choose whichever you prefer.
   ALTERNATIVE A - MIT License
   Copyright (c) 2026 the ltrain.h authors
   Permission is hereby granted, free of charge, to any person obtaining a copy of this software
   and associated documentation files (the "Software"), to deal in the Software without
   restriction, including without limitation the rights to use, copy, modify, merge, publish,
   distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
   Software is furnished to do so, subject to the following conditions:
   The above copyright notice and this permission notice shall be included in all copies or
   substantial portions of the Software.
   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
   BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
   NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
   DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
   OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
   ALTERNATIVE B - Public Domain (www.unlicense.org)
   This is free and unencumbered software released into the public domain.  Anyone is free to
   copy, modify, publish, use, compile, sell, or distribute this software, either in source code
   form or as a compiled binary, for any purpose, commercial or non-commercial, and by any means.
------------------------------------------------------------------------------------------------ */
