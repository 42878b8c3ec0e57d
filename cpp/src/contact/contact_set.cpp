#include "rigidiff/contact/contact_set.hpp"

namespace rigidiff {

void addContact(std::vector<Contact>& out, int geom_a, int geom_b, const Feature& fa, const SE3& Ma,
                const Feature& fb, const SE3& Mb, const Vec3& normal_hint) {
  Contact c;
  c.geom_a = geom_a;
  c.geom_b = geom_b;
  c.feature_a = fa;
  c.feature_b = fb;
  c.type = contactType(fa.kind, fb.kind);
  c.normal = normal_hint;
  c.update(Ma, Mb);
  out.push_back(c);
}

}  // namespace rigidiff
