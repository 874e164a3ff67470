// The sphere touch decided on the inputs' values (docs/design.md §9.6a), for the pairs whose
// f32 margin lies within the filter's error bound (touch_verdict, frame.wgsl): the steps of
// `touches_columns` in src/geom/sphere_exact.rs, integer operations only, so every device
// gives the CPU's answer. Every input is m 2^e (m < 2^24); scaled by the pair's lowest power of
// two it is three 16-bit digits from a digit position on; |d|^2 - s^2 is twelve products of
// two inputs, each product of digits added in two 16-bit halves to signed columns, and one
// carry pass gives the sign. Cold code, written small: one flat loop over the products, the
// digits decoded where they are used (arrays of digits, or loops nested per term, built
// several times slower on lavapipe for the same answer).

const TOUCH_COLUMNS: u32 = 26u;
// Largest shift of an input's lowest bit above the pair's lowest (MAX_SHIFT).
const TOUCH_MAX_SHIFT: i32 = 175;

// Input k of the pair: a.x, a.y, a.z, a.w, b.x, ... (the bits of the f32).
fn touch_input(a: vec4<f32>, b: vec4<f32>, k: u32) -> u32 {
    return bitcast<u32>(select(a, b, k >= 4u)[k & 3u]);
}

// The integer significand of an f32 (its magnitude's), 0 for zeros.
fn touch_significand(bits: u32) -> u32 {
    let f = bits & 0x7fffffu;
    return select(f | 0x800000u, f, ((bits >> 23u) & 0xffu) == 0u);
}

// The power of two of an f32's lowest significand bit.
fn touch_exponent(bits: u32) -> i32 {
    let x = i32((bits >> 23u) & 0xffu);
    return select(x - 150, -149, x == 0);
}

// Digit `i` (16 bits) of the input `bits` scaled by 2^-low, and its position (digits from
// position 0; a zero's digits are zero, at position 0).
fn touch_digit(bits: u32, low: i32, i: u32) -> vec2<u32> {
    let m = touch_significand(bits);
    let t = select(u32(touch_exponent(bits) - low), 0u, m == 0u);
    let r = t % 16u;
    var d = (m << r) & 0xffffu;
    if i == 1u {
        d = (m >> (16u - r)) & 0xffffu;
    } else if i == 2u {
        d = (m >> 16u) >> (16u - r);
    }
    return vec2<u32>(d, t / 16u + i);
}

// Whether spheres a and b (x, y, z, r) touch, exactly; `rounded` (the f32 verdict) for inputs
// outside validation's range (non-finite, or spanning more than TOUCH_MAX_SHIFT bits).
fn touches_exact(a: vec4<f32>, b: vec4<f32>, rounded: bool) -> bool {
    var low = 1000;
    var high = -1000;
    var finite = true;
    for (var k = 0u; k < 8u; k++) {
        let bits = touch_input(a, b, k);
        finite = finite && ((bits >> 23u) & 0xffu) != 0xffu;
        if touch_significand(bits) != 0u {
            let e = touch_exponent(bits);
            low = min(low, e);
            high = max(high, e);
        }
    }
    if low == 1000 {
        return true; // every input zero: coincident points
    }
    if !finite || high - low > TOUCH_MAX_SHIFT {
        return rounded;
    }
    var columns: array<i32, TOUCH_COLUMNS>;
    // Product n: digit i of input x times digit j of input y, of term t = n / 9 (a_i^2, b_i^2,
    // -2 a_i b_i per axis; then -r1^2, -r2^2, -2 r1 r2) with its weight.
    for (var n = 0u; n < 108u; n++) {
        let t = n / 9u;
        let g = t / 3u;
        let kind = t % 3u;
        let bx = touch_input(a, b, g + select(0u, 4u, kind == 1u));
        let by = touch_input(a, b, g + select(0u, 4u, kind != 0u));
        let dx = touch_digit(bx, low, (n / 3u) % 3u);
        let dy = touch_digit(by, low, n % 3u);
        let p = dx.x * dy.x;
        let w = select(select(1, -1, g == 3u), -2, kind == 2u)
            * select(1, -1, (bx >> 31u) != (by >> 31u));
        let c = dx.y + dy.y;
        columns[c] += w * i32(p & 0xffffu);
        columns[c + 1u] += w * i32(p >> 16u);
    }
    // One carry pass: the sum is carry 2^(16 TOUCH_COLUMNS) + the digits, each in [0, 2^16).
    var carry = 0;
    var any_digit = false;
    for (var c = 0u; c < TOUCH_COLUMNS; c++) {
        let v = columns[c] + carry;
        any_digit = any_digit || (v & 0xffff) != 0;
        carry = v >> 16u;
    }
    return carry < 0 || (carry == 0 && !any_digit);
}
