namespace tmm {
enum mode_kind { WIDE, NARROW, CHECKED };
template <int V> struct mode { static constexpr int value = V; };
template <int BYTES>
inline void cp_async(void* dst, const float* src, int src_bytes) {
  if (((uintptr_t)dst) % BYTES || (src_bytes && ((uintptr_t)src) % BYTES)) { fprintf(stderr, "cp.async misaligned\n"); abort(); }
  if (src_bytes != 0 && src_bytes != BYTES) { fprintf(stderr, "partial src\n"); abort(); }
  cp_op o{dst, src, BYTES, src_bytes};
  if (g_cp_mode == 0) cp_do(o); else t_open.push_back(o);
}
inline void cp_async_commit() { t_groups.push_back(std::move(t_open)); t_open.clear(); }
template <int PENDING>
inline void cp_async_wait() {
  while ((int)t_groups.size() > PENDING) { for (auto& o : t_groups.front()) cp_do(o); t_groups.pop_front(); }
}
template <int VEC>
inline void load_wide(float (&v)[VEC], const float* p) {
  if (((uintptr_t)p) % (4 * VEC)) { fprintf(stderr, "wide load misaligned\n"); abort(); }
  for (int j = 0; j < VEC; ++j) v[j] = p[j];
}
}  // namespace tmm
