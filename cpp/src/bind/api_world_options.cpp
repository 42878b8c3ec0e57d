// Bindings of the world's options (declared in rigidiff/bind/api.hpp).
#include <cmath>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"

namespace rigidiff {
namespace bind {

void setTimeStep(WorldOptions& o, double dt) {
  RD_CHECK_ARG(std::isfinite(dt) && dt > 0.0, "dt must be > 0, got " << dt);
  o.dt = dt;
}

void setGravity(WorldOptions& o, Model& model, const double* g) {
  checkFinite(g, 3, "gravity");
  o.gravity = Vec3(g[0], g[1], g[2]);
  model.gravity = o.gravity;
}

void getGravity(const WorldOptions& o, double* g) {
  for (int k = 0; k < 3; ++k) g[k] = o.gravity[k];
}

void setContactOptions(WorldOptions& o, CollisionModel& cmodel, int friction_directions, int friction_combine,
                       int restitution_combine, double restitution_threshold, double erp,
                       double penetration_allowance, double max_correction_velocity, bool joint_limits,
                       bool joint_friction, double lcp_tolerance, bool bounce_correction, bool warm_start,
                       bool speculative, double rest_depth, double margin, double max_penetration) {
  RD_CHECK_ARG(friction_directions == 2 || friction_directions == 4,
               "friction_directions must be 2 or 4, got " << friction_directions);
  RD_CHECK_ARG(friction_combine >= 0 && friction_combine <= 3, "unknown friction combine code " << friction_combine);
  RD_CHECK_ARG(restitution_combine >= 0 && restitution_combine <= 3,
               "unknown restitution combine code " << restitution_combine);
  RD_CHECK_ARG(std::isfinite(restitution_threshold) && restitution_threshold >= 0.0,
               "restitution_threshold must be >= 0, got " << restitution_threshold);
  RD_CHECK_ARG(std::isfinite(erp) && erp >= 0.0 && erp <= 1.0, "erp must be in [0, 1], got " << erp);
  RD_CHECK_ARG(std::isfinite(penetration_allowance) && penetration_allowance >= 0.0,
               "penetration_allowance must be >= 0, got " << penetration_allowance);
  RD_CHECK_ARG(max_correction_velocity > 0.0, "max_correction_velocity must be > 0, got " << max_correction_velocity);
  RD_CHECK_ARG(std::isfinite(lcp_tolerance) && lcp_tolerance > 0.0, "tolerance must be > 0, got " << lcp_tolerance);
  RD_CHECK_ARG(std::isfinite(rest_depth) && rest_depth >= 0.0, "rest_depth must be >= 0, got " << rest_depth);
  RD_CHECK_ARG(std::isfinite(margin) && margin >= 0.0, "contact margin must be finite and >= 0, got " << margin);
  RD_CHECK_ARG(std::isfinite(max_penetration) && max_penetration >= 0.0,
               "max_penetration must be >= 0, got " << max_penetration);
  ContactOptions& c = o.contact;
  c.frictionDirections = friction_directions;
  c.frictionCombine = static_cast<Combine>(friction_combine);
  c.restitutionCombine = static_cast<Combine>(restitution_combine);
  c.restitutionThreshold = restitution_threshold;
  c.erp = erp;
  c.penetrationAllowance = penetration_allowance;
  c.maxCorrectionVelocity = max_correction_velocity;
  c.jointLimits = joint_limits;
  c.jointFriction = joint_friction;
  c.lcp.tolerance = lcp_tolerance;
  c.bounceCorrection = bounce_correction;
  c.warmStart = warm_start;
  c.speculative = speculative;
  c.restDepth = rest_depth;
  o.contact_margin = margin;
  o.max_penetration = max_penetration;
  cmodel.margin = margin;
}

void readContactOptions(const WorldOptions& o, int* flags, double* values) {
  const ContactOptions& c = o.contact;
  const int f[8] = {c.frictionDirections, static_cast<int>(c.frictionCombine), static_cast<int>(c.restitutionCombine),
                    c.jointLimits, c.jointFriction, c.bounceCorrection, c.warmStart, c.speculative};
  const double x[8] = {c.restitutionThreshold, c.erp, c.penetrationAllowance, c.maxCorrectionVelocity,
                       c.lcp.tolerance, c.restDepth, o.contact_margin, o.max_penetration};
  for (int k = 0; k < 8; ++k) {
    flags[k] = f[k];
    values[k] = x[k];
  }
}

}  // namespace bind
}  // namespace rigidiff
