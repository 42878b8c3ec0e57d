# Declarations of the C++ surface in cpp/include/rigidiff/bind/api_projective.hpp (no Eigen types here).
from libcpp cimport bool
from libcpp.string cimport string

from rigidiff._cpp.api cimport Model


cdef extern from "rigidiff/bind/api_projective.hpp" namespace "rigidiff::bind" nogil:
    cdef cppclass ProjectiveWorld:
        ProjectiveWorld() except +
        void setTimeStep(double dt) except +
        double timeStep()
        void setGravity(const double* g) except +
        void gravity(double* out)
        void setOptions(double tolerance, int max_iterations, int history, double contact_stiffness,
                        int method) except +
        void options(double* out)
        void setThreads(int threads) except +
        int threads()
        void setFriction(double friction, double friction_velocity) except +
        double friction()
        double frictionVelocity()
        void setContactModel(int contact_model) except +
        int contactModel()
        int addBody(const string& name, const double* points, int n, const int* elements, int m, int nodes,
                    double youngs_modulus, double poisson_ratio, double density, int energies) except +
        void setMaterial(int body, double youngs_modulus, double poisson_ratio) except +
        void setDensity(int body, double density) except +
        void setFixed(int body, const int* vertices, int count) except +
        int addMuscle(const string& name, int body, const int* elements, int count, const double* fibers,
                      int fiber_rows, double stiffness) except +
        void setMuscleStiffness(int muscle, double stiffness) except +
        int muscleCount()
        double muscleStiffness(int muscle) except +
        void setActivation(const double* a) except +
        void muscleGradients(double* out)
        void addPlane(const double* normal, double offset) except +
        void addSphere(const double* centre, double radius) except +
        int addBox(const double* half, const double* rotation, const double* position) except +
        void setObstaclePose(int o, const double* rotation, const double* position) except +
        void setObstacleVelocity(int o, const double* linear, const double* angular) except +
        int obstacleCount()
        void obstacleGradients(double* out)
        void contactAndDensityGradients(double* out)
        int bodyCount()
        int vertexCount()
        void bodyRange(int body, int* out) except +
        void masses(double* out)
        void surfaceMask(int* out)
        void fixedMask(int* out)
        void setSkeletons(const Model& model) except +
        void clearSkeletons()
        int addLinkShape(int joint, int kind, const double* rotation, const double* position,
                         const double* size) except +
        int addLinkHull(int joint, const double* rotation, const double* position, const double* vertices,
                        int nvert, const int* triangles, int ntri) except +
        void setLinkGroup(int shape, int group, int parent_joint, bint self_collision) except +
        int skeletonDofs()
        void setJointLimits(bool on, double stiffness) except +
        void jointLimits(double* out)
        int skeletonParameterCount()
        void skeletonParameterGradients(double* out)
        int stateSize()
        int configurationSize()
        void step(const double* q, const double* v, const double* f, double* q_out, double* v_out) except +
        void stepVjp(const double* q, const double* v, const double* f, const double* gq_next,
                     const double* gv_next, double* q_out, double* v_out, double* gq, double* gv, double* gf,
                     double* gE, double* gnu) except +
        void stats(double* out)
        void setStartGuess(const double* x) except +
        void setRaiseOnFailure(bint raise_)
        bint raiseOnFailure()
        double energy(const double* x, double* grad) except +
        int hessianProduct(const double* x, const double* z, double* out, bint after_energy) except +

    void projectiveSvd3(const double* F, double* U, double* sigma, double* V)
    void projectiveVolumeProjection(const double* sigma, double* s, double* jacobian) except +
    void projectiveHullDistances(const double* vertices, int nvert, const int* triangles, int ntri,
                                 const double* points, int npoints, double reach, double* distances,
                                 double* normals, double* curvatures) except +
