# Declarations of the C++ surface in cpp/include/rigidiff/bind/api.hpp (no Eigen types here).
from libc.stdint cimport int64_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef extern from "rigidiff/multibody/model.hpp" namespace "rigidiff" nogil:
    cdef cppclass Model:
        Model() except +
        int nq
        int nv
        int njoints
        bint implicit_gyroscopic


cdef extern from "rigidiff/multibody/data.hpp" namespace "rigidiff" nogil:
    cdef cppclass Data:
        Data(const Model&) except +


cdef extern from "rigidiff/collision/collision_model.hpp" namespace "rigidiff" nogil:
    cdef cppclass CollisionModel:
        CollisionModel() except +
    cdef cppclass CollisionData:
        CollisionData(const CollisionModel&) except +


cdef extern from "rigidiff/world/contact_step.hpp" namespace "rigidiff" nogil:
    cdef cppclass ContactOptions:
        ContactOptions() except +
    cdef cppclass ContactStepData:
        ContactStepData(const CollisionModel&) except +


cdef extern from "rigidiff/world/world_options.hpp" namespace "rigidiff" nogil:
    cdef cppclass WorldOptions:
        WorldOptions() except +
        double dt
        ContactOptions contact
        double max_penetration
        int integrator
        int gyroscopic
    void applyWorldOptions(const WorldOptions&, Model&, CollisionModel&)


cdef extern from "rigidiff/world/free_joint_motion.hpp" namespace "rigidiff" nogil:
    void stepAcceleration(const Model&, double dt, const double* v, const double* v_next, double* a) except +


cdef extern from "rigidiff/world/world_model.hpp" namespace "rigidiff" nogil:
    cdef cppclass WorldModel:
        WorldModel() except +
        Model model
        CollisionModel cmodel
        WorldOptions options
        void reset() except +
        bint constrained()
    void stepKind(const WorldModel&) except +


cdef extern from "rigidiff/world/knot_team.hpp" namespace "rigidiff" nogil:
    cdef cppclass KnotTeam:
        int threads()
        long runs()
        long fallbacks()
        long helperKnots()
        long stepperKnots()


cdef extern from "rigidiff/world/world_data.hpp" namespace "rigidiff" nogil:
    cdef cppclass WorldData:
        WorldData(const WorldModel&) except +
        Data data
        CollisionData collision
        ContactStepData contact
        vector[double] warm_end
        bint warm_known
        void endAt(const Model&, const double* q, const double* v)
        void forgetEndState()
        const KnotTeam* madeKnotTeam()
        void resetCollision(const WorldModel&) except +


cdef extern from "rigidiff/bind/api_distance.hpp" namespace "rigidiff::bind" nogil:
    int primitivePointCount(int primitive) except +
    void primitiveDistances(int primitive, int type, int n, const double* points, const double* eps_x, int order,
                            double* value, double* gradient, double* hessian) except +
    void primitiveDistanceTypes(int primitive, int n, const double* points, int* types) except +


cdef extern from "rigidiff/bind/api_ccd.hpp" namespace "rigidiff::bind" nogil:
    int ccdPointCount(int pair) except +
    void primitiveCcd(int pair, int n, const double* points, double min_distance, double t_max,
                      double conservative_rescaling, int max_iterations, unsigned char* hit, double* toi,
                      unsigned char* exhausted) except +
    void ccdSweptPairs(const double* start_a, const double* end_a, int na, int ka, const double* start_b,
                       const double* end_b, int nb, int kb, double min_distance, vector[int]& out) except +


cdef extern from "rigidiff/bind/api_world.hpp" namespace "rigidiff::bind" nogil:
    int addBodyPart(WorldModel&, int j, const double* inertia, bool own) except +
    int addStateBlock(WorldModel&, const string& name, int kind, int nq, int nv) except +
    bint readStateBlock(const WorldModel&, const string& name, int* out) except +
    void setBodyPartInertia(WorldModel&, int b, const double* inertia) except +
    void refreshWorld(WorldModel&) except +
    int worldParameterCount(const WorldModel&, int groups) except +
    void worldStep(const WorldModel&, WorldData&, const double* q, const double* v, const double* tau,
                   const double* fext, double* q_out, double* v_out) except +
    void worldStepJacobians(const WorldModel&, WorldData&, const double* q, const double* v, const double* tau,
                            const double* fext, int groups, double* q_out, double* v_out, double* jac,
                            double* pjac) except +
    void worldStepVJP(const WorldModel&, WorldData&, const double* q, const double* v, const double* tau,
                      const double* fext, const double* gq, const double* gv, int groups, bool explore,
                      double* q_out, double* v_out, double* g_state, double* g_tau, double* g_params) except +
    void worldRollout(const WorldModel&, const double* q0, const double* v0, const double* taus, int T, double* Q,
                      double* V, int* rows, vector[int64_t]* keys, vector[int]* classes,
                      vector[double]* impulses) except +
    void worldRolloutBackward(const WorldModel&, const double* Q, const double* V, const double* taus, int T,
                              const double* GQ, const double* GV, int groups, bool explore, double* g_taus,
                              double* g_state, double* g_params, const int* rows, const int64_t* keys,
                              const int* classes, const double* impulses) except +
    void worldTrajectoryJacobians(const WorldModel&, WorldData&, const double* Q, const double* V,
                                  const double* TAU, int T, double* jac, int threads) except +
    void worldClosedLoopRollout(const WorldModel&, WorldData&, const double* q0, const double* v0,
                                const double* Qr, const double* Vr, const double* Ur, const double* k,
                                const double* K, double alpha, const double* S, int nu, const double* lo,
                                const double* hi, int T, double* Q, double* V, double* U) except +
    void worldStepBatch(const WorldModel&, const double* Q, const double* V, const double* TAU, int N, int threads,
                        double* Qout, double* Vout) except +
    void worldRolloutBatch(const WorldModel&, const double* Q0, const double* V0, const double* TAUS,
                           bool sharedTaus, int N, int T, int threads, double* Q, double* V) except +
    void worldStepJacobiansBatch(const WorldModel&, const double* Q, const double* V, const double* TAU, int N,
                                 int threads, double* Qout, double* Vout, double* jac) except +


cdef extern from "rigidiff/bind/api_bvh.hpp" namespace "rigidiff::bind" nogil:
    cdef cppclass MeshTree:
        MeshTree(const double* points, int n, const int* faces, int m, double inflate) except +
        void refit(const double* points, int n, double inflate) except +
        void pairs(const MeshTree& other, const double* pose, const double* other_pose, double margin,
                   vector[int]& out) except +
        void selfPairs(double margin, vector[int]& out) except +
        void boxQuery(const double* lo, const double* hi, double margin, vector[int]& out) except +
        void halfspaceQuery(const double* normal, double offset, double margin, vector[int]& out) except +
        void shape(int* out)
    void boxSelfPairs(const double* lo, const double* hi, int n, vector[int]& out) except +


cdef extern from "rigidiff/bind/api.hpp" namespace "rigidiff::bind" nogil:
    int addJoint(Model&, int parent, int type, const double* placement, const double* axes, const double* inertia,
                 const string& name) except +
    void setJointParameters(Model&, int j, const double* lower, const double* upper, const double* rest,
                            const double* damping, const double* stiffness, const double* armature,
                            const double* friction, const double* effort, const double* velocity) except +
    int addFrame(Model&, const string& name, int j, const double* placement) except +

    void setTimeStep(WorldOptions&, double dt) except +
    void setGravity(WorldOptions&, Model&, const double* g) except +
    void getGravity(const WorldOptions&, double* g) except +
    void setContactOptions(WorldOptions&, CollisionModel&, int friction_directions, int friction_combine,
                           int restitution_combine, double restitution_threshold, double erp,
                           double penetration_allowance, double max_correction_velocity, bool joint_limits,
                           bool joint_friction, double lcp_tolerance, bool bounce_correction, bool warm_start,
                           bool speculative, double rest_depth, double margin, double max_penetration) except +
    void readContactOptions(const WorldOptions&, int* flags, double* values) except +

    void inverseDynamics(const Model&, Data&, const double* q, const double* v, const double* a, const double* fext,
                         double* tau) except +
    void forwardDynamics(const Model&, Data&, const double* q, const double* v, const double* tau,
                         const double* fext, double* ddq) except +
    void massMatrix(const Model&, Data&, const double* q, double* M) except +
    void massMatrixInverse(const Model&, Data&, const double* q, double* Minv) except +
    void biasForces(const Model&, Data&, const double* q, const double* v, double* b) except +
    void framePoses(const Model&, Data&, const double* q, double* poses) except +
    void frameVelocities(const Model&, Data&, const double* q, const double* v, bool local, double* out) except +
    void frameAccelerations(const Model&, Data&, const double* q, const double* v, const double* a, bool local,
                            double* out) except +
    void frameJacobian(const Model&, Data&, const double* q, int f, bool local, double* J) except +
    void frameJacobianTimeVariation(const Model&, Data&, const double* q, const double* v, int f, bool local,
                                    double* dJ) except +
    double centerOfMass(const Model&, Data&, const double* q, double* com, double* Jcom) except +
    double kineticEnergy(const Model&, Data&, const double* q, const double* v) except +
    double potentialEnergy(const Model&, Data&, const double* q) except +
    void integrate(const Model&, const double* q, const double* dv, double* out) except +
    void difference(const Model&, const double* q0, const double* q1, double* out) except +
    void neutral(const Model&, double* q) except +
    void normalize(const Model&, double* q) except +

    void inverseDynamicsDerivatives(const Model&, Data&, const double* q, const double* v, const double* a,
                                    const double* fext, double* dtau_dq, double* dtau_dv) except +
    void forwardDynamicsDerivatives(const Model&, Data&, const double* q, const double* v, const double* tau,
                                    const double* fext, double* ddq_dq, double* ddq_dv, double* ddq_dtau) except +

    void integrateJacobians(const Model&, const double* q, const double* dv, double* d_dq, double* d_ddv) except +
    void differenceJacobians(const Model&, const double* q0, const double* q1, double* d_dq0,
                             double* d_dq1) except +

    void jointInertiaParameters(const Model&, double* theta) except +
    void inverseDynamicsRegressor(const Model&, Data&, const double* q, const double* v, const double* a,
                                  double* Y) except +
    void tangentGradients(const Model&, const double* Q, const double* Gc, int N, double* Gt) except +
    void coordinateGradients(const Model&, const double* Q, const double* Gt, int N, double* Gc) except +

    void frameVelocityDerivatives(const Model&, Data&, const double* q, const double* v, int f, bool local,
                                  double* dv_dq, double* dv_dv) except +
    void frameAccelerationDerivatives(const Model&, Data&, const double* q, const double* v, const double* a,
                                      int f, bool local, double* da_dq, double* da_dv, double* da_da) except +
    void centerOfMassVelocityDerivatives(const Model&, Data&, const double* q, const double* v,
                                         double* out) except +

    void shapeDistance(int type_a, const double* params_a, const double* vertices_a, int nvert_a,
                       const double* points_a, int npoints_a, const int* faces_a, int nfaces_a, double thickness_a,
                       const double* pose_a, int type_b, const double* params_b, const double* vertices_b,
                       int nvert_b, const double* points_b, int npoints_b, const int* faces_b, int nfaces_b,
                       double thickness_b, const double* pose_b, double* out) except +

    # feature-contact derivatives, for tests (api_feature_derivatives.cpp)
    void featureDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                            double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                            double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                            const double* side_n, double* value, double* dpoint, double* dnormal,
                            double* ddistance) except +
    void featurePointDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                                 double angle_a, const double* pose_a, int kind_b, const double* p_b,
                                 const double* d_b, double margin_b, const double* pose_b, const double* fallback,
                                 const double* side_p, const double* side_n, double* value, int* counts,
                                 double* points, double* dpoint, double* dnormal, double* ddistance) except +

    void setGeometryCoefficients(CollisionModel&, int g, double friction, double restitution) except +
    int addGeometry(CollisionModel&, const Model&, int type, const double* params, const double* vertices, int nvert,
                    int frame, int skeleton, const double* placement, double friction, double restitution,
                    unsigned group, unsigned mask, const string& name, const double* mesh_points, int n_points,
                    const int* mesh_faces, int n_faces, double thickness) except +
    void setSelfCollision(CollisionModel&, int skeleton, bool enabled) except +
    int computeContacts(const Model&, Data&, const CollisionModel&, CollisionData&, const double* q) except +
    void readContacts(const CollisionData&, double* points, double* normals, double* distances, int* geom_a,
                      int* geom_b, int* types) except +

    void clearWarmStart(ContactStepData&) except +
    int warmStartSize(const ContactStepData&) except +
    bint readWarmStart(const ContactStepData&, int64_t* keys, int* classes, double* impulses) except +
    void writeWarmStart(ContactStepData&, const int64_t* keys, const int* classes, const double* impulses,
                        int n) except +
    int lastRowCount(const ContactStepData&) except +
    double lastDeepest(const ContactStepData&) except +
    void readLastLcp(const Model&, const ContactStepData&, double* A, double* b, double* lo, double* hi, double* x,
                     int* findex) except +
    int lastContactCount(const ContactStepData&) except +
    void readLastImpulses(const ContactStepData&, double* normal, double* friction, int* classes,
                          int* status) except +
    void readLastRows(const ContactStepData&, int* kinds, int* index, int* classes) except +
    void readLastContacts(const ContactStepData&, double* points, double* normals, double* distances, int* geom_a,
                          int* geom_b, int* types) except +

    void frameAlongTrajectory(const Model&, Data&, const double* Q, int N, int f, double* poses,
                              double* J) except +
    bint riccatiBackward(int T, int nx, int nu, const double* A, const double* B, const double* lx,
                         const double* lxx, const double* lu, const double* luu, const double* lo, const double* hi,
                         double mu, double* k, double* K, double* dV) except +


    # contact solver core (api_contact.cpp)
    void solveBoxedLcp(int n, const double* A, const double* b, const double* lo, const double* hi,
                       const int* findex, const int* warm, double tolerance, double* x, double* w, int* classes,
                       int* status, double* dx_db, const double* g, double* grad_b, double* grad_A) except +
    void solveBoxedLcpFromFactors(int n, int dim, const double* J, const double* K, int blocks,
                                  const int* blockStart, const double* b, const double* lo, const double* hi,
                                  const int* findex, const int* warm, int iterativeSize, double sweepsWork,
                                  double* x, double* w, int* classes, int* status, double* dx_db) except +
    int projectedCgFromFactors(int n, int dim, const double* J, const double* K, int blocks, const int* blockStart,
                               const double* b, const double* lo, const double* hi, const int* findex, double* x,
                               double* w, int* valid) except +

    void linalgDenseProduct(int m, int k, int n, const double* A, const double* B, double* C, bool accumulate,
                            bool transposed_a) except +
    bool linalgUsesAvx2()


cdef extern from "rigidiff/bind/api_barrier.hpp" namespace "rigidiff::bind" nogil:
    cdef cppclass BarrierWorld:
        BarrierWorld() except +
        void setTimeStep(double dt) except +
        double timeStep()
        void setGravity(const double* g) except +
        void gravity(double* out)
        void setOptions(double dhat, double newton_tolerance, int max_newton_iterations, double friction,
                        double friction_velocity) except +
        void options(double* out)
        int addAffineBody(const string& name, const double* points, int n, const int* faces, int m, double density,
                          double stiffness) except +
        int addStaticBody(const string& name, const double* points, int n, const int* faces, int m, double density,
                          double stiffness) except +
        int bodyFaceCount(int k) except +
        void popBody()
        void setBodyParameters(int body, double density, double stiffness) except +
        void setFixed(int body, bint fixed) except +
        void addPlane(const double* normal, double offset) except +
        void popPlane()
        int bodyCount()
        int planeCount()
        void plane(int i, double* out) except +
        int nq()
        int nv()
        void massProperties(int body, double* out) except +
        void massMatrix(int body, double* out) except +
        int vertexCount(int body) except +
        int faceCount(int body) except +
        void restMesh(int body, double* points, int* faces) except +
        void checkState(const double* q) except +
        void step(const double* q, const double* v, const double* tau, double* q_out, double* v_out) except +
        int parameterCount()
        void stepJacobians(const double* q, const double* v, const double* tau, double* q_out, double* v_out,
                           double* jac, double* jac_p) except +
        void stepVjp(const double* q, const double* v, const double* tau, const double* gq_next,
                     const double* gv_next, double* q_out, double* v_out, double* gq, double* gv,
                     double* gtau, double* gparams) except +
        void rolloutBackward(int T, const double* Q, const double* V, const double* taus, const double* kappas,
                             const double* GQ, const double* GV, double* gq0, double* gv0, double* gtaus,
                             double* gparams) except +
        void stats(double* out)
        double incrementalPotential(const double* q, const double* q_n, const double* v_n, const double* tau,
                                    double kappa, double* grad) except +
        double frictionPotential(const double* q, const double* q_n, double kappa, double* grad) except +
        double barrierPotential(const double* q, double* grad, double* hessian) except +
        double collisionFreeStep(const double* q, const double* dq) except +
        void contactTimings(const double* q, const double* dq, int repeat, double* out) except +
        void setSkeletons(const Model& model) except +
        void updateSkeletons(const Model& model) except +
        int addSkeletonSurface(const string& name, int joint, int parent_joint, int group, bint self_collision,
                               const double* points, int n, const int* faces, int m) except +
        int skeletonSurfaceCount()
        int skeletonSurfaceFaces(int k) except +
        bint skeletonSurfaceClosed(int k) except +
        void clearSkeletons()
        void setJointLimits(bint on)
        bint jointLimits()
        void setGyroscopic(bint implicit)
        bint gyroscopic()
        void contactCoordinates(const double* q, double* y, double* jac) except +

    void barrierValues(const double* s, int n, double shat, double* out) except +
    void parallelChunkVisits(int n, int bad, int* visits) except +
    double orthogonalityTerms(const double* q, double weight, double* grad, double* hessian) except +
    void barrierStiffness(double bbox_diagonal, double dhat, double average_mass, double grad_dot, double grad_sq,
                          double* out) except +


cdef extern from "rigidiff/trajopt/ilqr_solver.hpp" namespace "rigidiff" nogil:
    cdef cppclass TrajectoryCosts:
        void addState(const int* knots, int n, const double* q_target, const double* v_target, const double* Wq,
                      const double* Wv) except +
        void addControl(const double* target, const double* W) except +
        void addBody(int f, const int* knots, int n, const double* point, const double* position, const double* W,
                     const double* R, const double* Wr) except +
        double evaluate(const Model&, Data&, const double* Q, const double* V, const double* TAU, double* gq,
                        double* gv, double* gtau, double* hxx, double* huu) except +
    cdef enum class IlqrStep(int):
        Accepted
        Converged
        NoDecrease
        Failed
    cdef cppclass IlqrSolver:
        IlqrSolver(int T, int nq, int nv, const double* S, int nu, const double* lo, const double* hi) except +
        TrajectoryCosts costs
        bool start(const WorldModel&, WorldData&, const double* q0, const double* v0, const double* guess,
                   double mu) except +
        IlqrStep iterate(const WorldModel&, WorldData&, double tol) except +
        void setThreads(int threads) except +
        int threads()
        double cost()
        double dynamicsSeconds()
        bool hasGains()
        const vector[double]& Q()
        const vector[double]& V()
        const vector[double]& U()
        const vector[double]& K()
